package io.kvscheduler.agent.spi;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import com.google.protobuf.StringValue;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NotificationHubTest {
  static Message n(String text) {
    return StringValue.of(text);
  }

  @Test
  void whatPluginsPublishBeforeTheFirstSubscriberReachesIt() throws Exception {
    NotificationHub hub = new NotificationHub();
    hub.publish(n("at start 1"));
    hub.publish(n("at start 2"));
    List<Message> first = new ArrayList<>();
    List<Message> second = new ArrayList<>();
    hub.subscribe(first::add);
    hub.subscribe(second::add);
    hub.publish(n("later"));
    assertThat(first).containsExactly(n("at start 1"), n("at start 2"), n("later"));
    assertThat(second).containsExactly(n("later"));
  }

  @Test
  void keepsTheLatestWhileNobodySubscribes() {
    NotificationHub hub = new NotificationHub();
    for (int i = 0; i < NotificationHub.KEPT_UNTIL_SUBSCRIBED + 10; i++) {
      hub.publish(n("n" + i));
    }
    List<Message> got = new ArrayList<>();
    hub.subscribe(got::add);
    assertThat(got).hasSize(NotificationHub.KEPT_UNTIL_SUBSCRIBED).startsWith(n("n10"));
  }

  @Test
  void aThrowingSubscriberDoesNotKeepTheNotificationFromOthers() throws Exception {
    NotificationHub hub = new NotificationHub();
    List<Message> got = new ArrayList<>();
    hub.subscribe(
        m -> {
          throw new IllegalStateException("refused");
        });
    AutoCloseable handle = hub.subscribe(got::add);
    hub.publish(n("a"));
    handle.close();
    hub.publish(n("b"));
    assertThat(got).containsExactly(n("a"));
    assertThat(hub.subscribers()).isEqualTo(1);
  }
}
