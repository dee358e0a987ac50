package io.kvscheduler.ctl.internal;

import io.kvscheduler.ctl.KvsCtl;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** A kvsctl command: reaches the root command's connection settings and the output. */
public abstract class AgentCommand implements Callable<Integer> {
  @Spec protected CommandSpec spec;

  /** The root command (connection settings, environment). */
  protected KvsCtl root() {
    return (KvsCtl) spec.root().userObject();
  }

  protected AgentClient client() {
    return root().client();
  }

  protected PrintWriter out() {
    return spec.commandLine().getOut();
  }

  protected PrintWriter err() {
    return spec.commandLine().getErr();
  }

  @Override
  public final Integer call() throws Exception {
    int code = run();
    out().flush();
    return code;
  }

  /** Runs the command; returns the exit code. */
  protected abstract int run() throws Exception;
}
