package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.net.ConnectException;
import java.nio.file.DirectoryNotEmptyException;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/**
 * The text of a southbound error in key errors, statuses and explanations: a message written for
 * the reader stays as it is (generic types, and those of the scheduler and its plugins); any other
 * exception type keeps its name before the message, since a southbound's message alone is often
 * just a path.
 */
class ErrorTextTest {
  /** A value whose Create throws what {@code failWith} names. */
  record Item(String failWith) {}

  private static void fail(Item v) throws Exception {
    switch (v.failWith()) {
      case "fs" -> throw new DirectoryNotEmptyException("/srv/a");
      case "net" -> throw new ConnectException("Connection refused");
      case "library" -> throw new AssertionFailedError("expected 1 but was 2");
      case "plain" -> throw new RuntimeException("the southbound refused the value");
      case "state" -> throw new IllegalStateException("not now");
      case "silent" -> throw new DirectoryNotEmptyException(null);
      default -> {}
    }
  }

  private static String errorOf(String failWith) {
    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build()) {
      kvs.registerDescriptors(
          KVDescriptor.builder("item", Item.class)
              .nbKeyPrefix("item/")
              .createWithoutMetadata((k, v) -> fail(v))
              .delete((k, v, m) -> {})
              .build());
      TransactionException e =
          catchThrowableOfType(
              TransactionException.class,
              () -> kvs.startNBTransaction().setValue("item/x", new Item(failWith)).commit());
      KeyError ke = e.keyErrors().get(0);
      assertThat(ke.operation()).isEqualTo(TxnOperation.CREATE);
      assertThat(kvs.valueStatus("item/x").state()).isEqualTo(ValueState.FAILED);
      assertThat(kvs.valueStatus("item/x").value().error()).isEqualTo(ke.message());
      List<String> why = kvs.explain("item/x");
      assertThat(why.get(0)).endsWith(": " + ke.message());
      return ke.message();
    }
  }

  @Test
  @DisplayName("a JDK exception of a specific type keeps its simple name before its message")
  void specificJdkTypeKeepsItsName() {
    assertThat(errorOf("fs")).isEqualTo("DirectoryNotEmptyException: /srv/a");
  }

  @Test
  @DisplayName("a library's exception type, and an Error, keep their simple name too")
  void libraryTypeKeepsItsName() {
    assertThat(errorOf("net")).isEqualTo("ConnectException: Connection refused");
    assertThat(errorOf("library")).isEqualTo("AssertionFailedError: expected 1 but was 2");
  }

  @Test
  @DisplayName("generic exceptions show their message alone")
  void genericTypesShowTheMessage() {
    assertThat(errorOf("plain")).isEqualTo("the southbound refused the value");
    assertThat(errorOf("state")).isEqualTo("not now");
  }

  @Test
  @DisplayName("an exception without a message shows its type's full name")
  void noMessageShowsTheFullName() {
    assertThat(errorOf("silent")).isEqualTo("java.nio.file.DirectoryNotEmptyException");
  }
}
