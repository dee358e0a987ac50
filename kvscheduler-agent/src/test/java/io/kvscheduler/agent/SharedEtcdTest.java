package io.kvscheduler.agent;

import io.kvscheduler.testsupport.EtcdFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of test classes sharing one real etcd server (started once per class, on free loopback ports
 * with a temporary data dir) and closing the agents each test started.
 */
abstract class SharedEtcdTest {
  static EtcdFixture etcd;
  EtcdTestSupport agents;

  @BeforeAll
  static void startEtcd() throws Exception {
    etcd = EtcdFixture.startNew();
  }

  @AfterAll
  static void stopEtcd() throws Exception {
    if (etcd != null) {
      etcd.close();
      etcd = null;
    }
  }

  @BeforeEach
  void startAgents() {
    agents = new EtcdTestSupport(etcd);
  }

  @AfterEach
  void closeAgents() {
    agents.close();
  }
}
