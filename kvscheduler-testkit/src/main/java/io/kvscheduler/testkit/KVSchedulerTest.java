package io.kvscheduler.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives each test of the annotated class (or the annotated test method) its own {@link
 * SchedulerFixture}: a scheduler with a manual clock and delay scheduler, status updates delivered
 * synchronously, no transaction log, and a {@link MockSouthbound}. Test methods and
 * {@code @BeforeEach} / {@code @AfterEach} methods receive it, or one of its parts, as a parameter:
 * {@link SchedulerFixture}, {@link io.kvscheduler.api.KVScheduler}, {@link MockSouthbound}, {@link
 * ManualClock} or {@link ManualDelayScheduler}. All parameters of one test belong to the same
 * fixture.
 *
 * <p>After the test (and its {@code @AfterEach} methods) the scheduler is closed, then the test
 * fails if the scheduler made an inconsistent call on the mock southbound ({@link
 * SchedulerFixture#assertSouthboundConsistent()}), unless {@link #checkSouthbound()} is false.
 *
 * <pre>{@code
 * @KVSchedulerTest
 * class RouteTest {
 *   @Test
 *   void routeWaitsForItsInterface(SchedulerFixture fx) {
 *     fx.kvs().registerDescriptors(routes(fx.southbound()), interfaces(fx.southbound()));
 *     fx.commit("config/route/r1", new Route("eth0"));
 *     assertThat(fx.kvs()).value("config/route/r1").isPending().waitingFor("interface-exists");
 *   }
 * }
 * }</pre>
 *
 * <p>JUnit Jupiter ({@code junit-jupiter-api}) must be on the test class path.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(KVSchedulerExtension.class)
public @interface KVSchedulerTest {
  /** Record planned operations beside the executed ones (simulation). Default: false. */
  boolean simulation() default false;

  /** Write the transaction log (logger {@code io.kvscheduler.txn}). Default: false. */
  boolean printTxnSummary() default false;

  /** Fail the test when the mock southbound saw an inconsistent call. Default: true. */
  boolean checkSouthbound() default true;

  /**
   * Southbound calls of one transaction that may run at the same time ({@link
   * io.kvscheduler.api.KVSchedulerBuilder#parallelism}); descriptors opt in with {@link
   * io.kvscheduler.api.KVDescriptor.Builder#maxConcurrency}. Default: 1, one call at a time.
   */
  int parallelism() default 1;
}
