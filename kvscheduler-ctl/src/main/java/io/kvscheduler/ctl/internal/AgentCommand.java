package io.kvscheduler.ctl.internal;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.ctl.KvsCtl;
import java.io.FilterWriter;
import java.io.IOException;
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

  private PrintWriter out;
  private PrintWriter err;

  /**
   * The standard output. What the command prints goes to the terminal with its control characters
   * escaped but line feeds ({@link Excerpt#escaped(CharSequence, boolean)}): a printer lays its
   * lines out itself and escapes the user data it prints in full.
   */
  protected PrintWriter out() {
    if (out == null) {
      out = escaping(spec.commandLine().getOut());
    }
    return out;
  }

  /** The standard error, escaped as {@link #out()}. */
  protected PrintWriter err() {
    if (err == null) {
      err = escaping(spec.commandLine().getErr());
    }
    return err;
  }

  private static PrintWriter escaping(PrintWriter to) {
    return new PrintWriter(
        new FilterWriter(to) {
          @Override
          public void write(int c) throws IOException {
            write(String.valueOf((char) c));
          }

          @Override
          public void write(char[] buf, int off, int len) throws IOException {
            write(new String(buf, off, len));
          }

          @Override
          public void write(String s, int off, int len) throws IOException {
            out.write(Excerpt.escaped(s.substring(off, off + len), true));
          }
        });
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
