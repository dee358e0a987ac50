package io.kvscheduler.plugins.mock;

import com.google.protobuf.Descriptors.FileDescriptor;
import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ConfigDomain;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.proto.ConfigData;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mock plugins as an agent plugin: registers the three mock models and the interface and L2
 * plugins' descriptors; the mock southbound logs every operation (logger {@code
 * io.kvscheduler.plugins.mock.sb}). Its models' messages are this module's {@code model/*.proto}
 * files, and its values have their own domain in the configurator's Config: {@code mock.ConfigData
 * mock_config = 100}.
 *
 * <p>The mock southbound lives in memory and ends with the process, unless the environment variable
 * {@value #STATE_FILE_ENV} (or the system property {@value #STATE_FILE_PROPERTY}) names a state
 * file: then it is kept in that file ({@link SouthboundJournal}), and an agent started again finds
 * what the southbound held, as it would find a real data plane after a crash. The file stays open
 * until the process ends (the scheduler may still call the southbound while the plugins close).
 */
public final class MockAgentPlugin implements AgentPlugin {
  /** Environment variable naming the mock southbound's state file. */
  public static final String STATE_FILE_ENV = "KVS_MOCK_STATE_FILE";

  /** System property naming the mock southbound's state file (wins over the environment). */
  public static final String STATE_FILE_PROPERTY = "kvs.mock.state-file";

  /** The mock domain's field in {@code ligato.configurator.Config}. */
  public static final int CONFIG_FIELD = 100;

  /** The mock domain's field name in {@code ligato.configurator.Config}. */
  public static final String CONFIG_FIELD_NAME = "mock_config";

  private static final Logger LOG = LoggerFactory.getLogger(MockAgentPlugin.class);

  private volatile MockPlugins plugins;
  private volatile SouthboundJournal journal;

  @Override
  public String name() {
    return "mock";
  }

  @Override
  public void init(AgentContext ctx) throws Exception {
    registerModels(ctx.models());
    String stateFile = System.getProperty(STATE_FILE_PROPERTY, System.getenv(STATE_FILE_ENV));
    if (stateFile != null && !stateFile.isBlank()) {
      journal = SouthboundJournal.open(Path.of(stateFile));
      LOG.info(
          "mock southbound kept in {} ({} operations replayed)",
          journal.file(),
          journal.replayed().size());
    }
    plugins = MockPlugins.register(ctx.scheduler(), SbPrinter.logging(), journal);
  }

  @Override
  public void registerModels(ModelRegistry models) {
    MockModels.registerAll(models);
  }

  /** {@code model/mock.proto} with its imports: the three models' messages and the domain's. */
  @Override
  public List<FileDescriptor> protoFiles() {
    return List.of(ConfigData.getDescriptor().getFile());
  }

  /** {@code mock.ConfigData mock_config = 100}. */
  @Override
  public Optional<ConfigDomain> configDomain() {
    return Optional.of(
        new ConfigDomain(CONFIG_FIELD_NAME, CONFIG_FIELD, ConfigData.getDescriptor()));
  }

  /** The registered plugins (after init). */
  public MockPlugins plugins() {
    return plugins;
  }
}
