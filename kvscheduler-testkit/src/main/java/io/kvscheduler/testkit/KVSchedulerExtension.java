package io.kvscheduler.testkit;

import io.kvscheduler.api.KVScheduler;
import java.lang.reflect.AnnotatedElement;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link KVSchedulerTest}: creates a {@link SchedulerFixture} per test
 * when a parameter first asks for it, and after the test closes it and checks the mock southbound.
 * Register it through the annotation.
 */
public final class KVSchedulerExtension implements ParameterResolver, AfterEachCallback {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(KVSchedulerExtension.class);
  private static final String FIXTURE = "fixture";

  private static final Map<Class<?>, Function<SchedulerFixture, Object>> PARTS =
      Map.of(
          SchedulerFixture.class, fx -> fx,
          KVScheduler.class, SchedulerFixture::kvs,
          MockSouthbound.class, SchedulerFixture::southbound,
          ManualClock.class, SchedulerFixture::clock,
          ManualDelayScheduler.class, SchedulerFixture::timers);

  /** Created by JUnit. */
  public KVSchedulerExtension() {}

  @Override
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return PARTS.containsKey(parameterContext.getParameter().getType())
        && extensionContext.getTestMethod().isPresent();
  }

  @Override
  public Object resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    Class<?> type = parameterContext.getParameter().getType();
    Function<SchedulerFixture, Object> part = PARTS.get(type);
    if (part == null) {
      throw new ParameterResolutionException("no " + type.getName() + " in a scheduler fixture");
    }
    return part.apply(fixture(extensionContext));
  }

  @Override
  public void afterEach(ExtensionContext context) {
    SchedulerFixture fx = context.getStore(NAMESPACE).remove(FIXTURE, SchedulerFixture.class);
    if (fx == null) {
      return; // nothing asked for a fixture
    }
    fx.close();
    if (settings(context).checkSouthbound()) {
      fx.assertSouthboundConsistent();
    }
  }

  private static SchedulerFixture fixture(ExtensionContext context) {
    KVSchedulerTest settings = settings(context);
    return context
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(
            FIXTURE,
            k ->
                SchedulerFixture.create(
                    b ->
                        b.enableTxnSimulation(settings.simulation())
                            .printTxnSummary(settings.printTxnSummary())
                            .parallelism(settings.parallelism())),
            SchedulerFixture.class);
  }

  /** The annotation of the test method, else of its class or an enclosing class. */
  private static KVSchedulerTest settings(ExtensionContext context) {
    for (Optional<ExtensionContext> c = Optional.of(context);
        c.isPresent();
        c = c.get().getParent()) {
      Optional<AnnotatedElement> element = c.get().getElement();
      if (element.isPresent()) {
        Optional<KVSchedulerTest> found =
            AnnotationSupport.findAnnotation(element.get(), KVSchedulerTest.class);
        if (found.isPresent()) {
          return found.get();
        }
      }
    }
    throw new IllegalStateException(
        "KVSchedulerExtension is registered through @KVSchedulerTest, which was not found on "
            + context.getDisplayName());
  }
}
