package io.kvscheduler.ctl;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.ctl.internal.AgentClient;
import io.kvscheduler.ctl.internal.CompletionCommand;
import io.kvscheduler.ctl.internal.ConfigCommand;
import io.kvscheduler.ctl.internal.CtlException;
import io.kvscheduler.ctl.internal.DriftCommand;
import io.kvscheduler.ctl.internal.DumpCommand;
import io.kvscheduler.ctl.internal.ExitCodes;
import io.kvscheduler.ctl.internal.ExplainCommand;
import io.kvscheduler.ctl.internal.FleetCommand;
import io.kvscheduler.ctl.internal.GraphCommand;
import io.kvscheduler.ctl.internal.HistoryCommand;
import io.kvscheduler.ctl.internal.MetricsCommand;
import io.kvscheduler.ctl.internal.ReportCommand;
import io.kvscheduler.ctl.internal.ResyncCommand;
import io.kvscheduler.ctl.internal.StatusCommand;
import io.kvscheduler.ctl.internal.TimelineCommand;
import io.kvscheduler.ctl.internal.WatchCommand;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * kvsctl, the command-line client of a running agent: talks to its REST API (and to etcd for {@code
 * config put --etcd}). Run {@code kvsctl --help} for the commands.
 */
@Command(
    name = "kvsctl",
    mixinStandardHelpOptions = true,
    versionProvider = KvsCtl.Version.class,
    description = "Looks at a running kvscheduler agent and changes its configuration.",
    subcommands = {
      StatusCommand.class,
      ExplainCommand.class,
      DumpCommand.class,
      HistoryCommand.class,
      TimelineCommand.class,
      GraphCommand.class,
      ResyncCommand.class,
      DriftCommand.class,
      MetricsCommand.class,
      ConfigCommand.class,
      WatchCommand.class,
      ReportCommand.class,
      FleetCommand.class,
      CompletionCommand.class
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:Success.",
      "1:The agent or etcd answered with an error, or a file could not be read or written.",
      "2:Bad command line.",
      "3:The agent or etcd could not be reached.",
      "4:The agent or etcd refused the request (token missing or wrong, read-only agent;"
          + " etcd user or password wrong, or no permission).",
      "5:The configuration file is invalid."
    },
    footerHeading = "%nEnvironment:%n",
    footer = {
      "  KVS_AGENT       the agent's URL (instead of --agent)",
      "  KVS_REST_TOKEN  the bearer token (instead of --token-file)",
      "  ETCD_ENDPOINTS  etcd endpoints of kvsctl fleet (instead of --etcd)",
      "  ETCD_CONFIG     etcd settings file of kvsctl fleet (instead of --etcd-config)"
    })
public final class KvsCtl {
  /** The agent's address when neither {@code --agent} nor {@code KVS_AGENT} is given. */
  public static final String DEFAULT_AGENT = "http://127.0.0.1:9191";

  private final Map<String, String> env;

  @Option(
      names = "--agent",
      paramLabel = "URL",
      scope = ScopeType.INHERIT,
      description = "The agent's REST API (default: KVS_AGENT, else " + DEFAULT_AGENT + ").")
  String agent;

  @Option(
      names = "--token-file",
      paramLabel = "FILE",
      scope = ScopeType.INHERIT,
      description = "File holding the agent's bearer token (default: KVS_REST_TOKEN).")
  Path tokenFile;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      scope = ScopeType.INHERIT,
      defaultValue = "60",
      converter = SecondsConverter.class,
      description =
          "Limit of one request, in seconds or as 30s or 2m (default: ${DEFAULT-VALUE}); for"
              + " fleet rollout, how long each agent may take to take the change.")
  int timeoutSeconds;

  /** Seconds given as {@code 60}, {@code 60s} or {@code 2m}. */
  static final class SecondsConverter implements CommandLine.ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      String v = value.strip();
      if (v.matches("\\d+s?")) {
        return Integer.parseInt(v.replace("s", ""));
      }
      if (v.matches("\\d+m")) {
        return Integer.parseInt(v.substring(0, v.length() - 1)) * 60;
      }
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a number of seconds (60, 60s or 2m)");
    }
  }

  /** The {@code --timeout} given (default 60 s). */
  public Duration timeout() {
    return Duration.ofSeconds(Math.max(1, timeoutSeconds));
  }

  /** A client reading {@code KVS_AGENT} and {@code KVS_REST_TOKEN} from {@code env}. */
  public KvsCtl(Map<String, String> env) {
    this.env = Map.copyOf(env);
  }

  /** The command line, with exit codes and error messages set up. */
  public static CommandLine commandLine(Map<String, String> env) {
    CommandLine cl = new CommandLine(new KvsCtl(env));
    cl.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          if (e instanceof CtlException c) {
            line.getErr().println("kvsctl: " + Excerpt.escaped(c.getMessage()));
            line.getErr().flush();
            return c.exitCode();
          }
          throw e;
        });
    cl.setExitCodeExceptionMapper(
        e ->
            e instanceof CommandLine.ParameterException p
                    && !(p.getCommandLine().getCommand() instanceof DriftCommand)
                ? ExitCodes.USAGE
                : ExitCodes.FAILED); // drift: 2 means drift, every error is 1
    return cl;
  }

  public static void main(String[] args) {
    System.exit(commandLine(System.getenv()).execute(args));
  }

  /** The environment kvsctl was started with. */
  public Map<String, String> env() {
    return env;
  }

  /** The agent's URL: {@code --agent}, else {@code KVS_AGENT}, else the default. */
  public URI agentUri() {
    String a =
        agent != null
            ? agent
            : env.getOrDefault("KVS_AGENT", "").isBlank() ? DEFAULT_AGENT : env.get("KVS_AGENT");
    if (!a.contains("://")) {
      a = "http://" + a;
    }
    try {
      URI u = URI.create(a);
      if (u.getHost() == null) {
        throw new IllegalArgumentException("no host");
      }
      return u;
    } catch (IllegalArgumentException e) {
      throw new CtlException(
          ExitCodes.USAGE, "the agent's address '" + a + "' is not a URL such as " + DEFAULT_AGENT);
    }
  }

  /** The bearer token: the content of {@code --token-file}, else {@code KVS_REST_TOKEN}. */
  public String token() {
    if (tokenFile != null) {
      try {
        String t = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        if (t.isEmpty()) {
          throw new CtlException(ExitCodes.USAGE, "token file " + tokenFile + " is empty");
        }
        return t;
      } catch (IOException e) {
        throw new CtlException(
            ExitCodes.USAGE, "cannot read token file " + tokenFile + ": " + e, e);
      }
    }
    String t = env.get("KVS_REST_TOKEN");
    return t == null || t.isBlank() ? null : t.strip();
  }

  /** A client of the agent given by the options and environment. */
  public AgentClient client() {
    return new AgentClient(agentUri(), token(), Duration.ofSeconds(Math.max(1, timeoutSeconds)));
  }

  /** The version of kvsctl (that of the agent it was built with). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = KvsCtl.class.getPackage().getImplementationVersion();
      return new String[] {"kvsctl " + (v == null ? "(development build)" : v)};
    }
  }
}
