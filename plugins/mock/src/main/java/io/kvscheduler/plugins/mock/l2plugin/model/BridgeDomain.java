package io.kvscheduler.plugins.mock.l2plugin.model;

import io.kvscheduler.plugins.mock.util.ProtoText;
import java.util.List;

/**
 * A mock bridge domain (model {@code mock.bridge-domain}, proto message {@code
 * mock.l2.BridgeDomain}).
 *
 * @param name logical name, also the last part of the key
 * @param interfaces member interfaces, in the given order; each becomes a derived binding
 */
public record BridgeDomain(String name, List<Interface> interfaces) {

  /**
   * A member of a bridge domain (proto message {@code mock.l2.BridgeDomain.Interface}); the value
   * of the derived binding {@code mock/bd/<bd>/interface/<name>}.
   *
   * @param name interface name
   * @param bridgedVirtualInterface whether it is the domain's BVI (at most one may be)
   */
  public record Interface(String name, boolean bridgedVirtualInterface) {
    public Interface {
      name = name == null ? "" : name;
    }

    @Override
    public String toString() {
      return new ProtoText()
          .str("name", name)
          .bool("bridged_virtual_interface", bridgedVirtualInterface)
          .toString();
    }
  }

  public BridgeDomain {
    name = name == null ? "" : name;
    interfaces = interfaces == null ? List.of() : List.copyOf(interfaces);
  }

  /** A bridge domain with the given members. */
  public static BridgeDomain of(String name, Interface... interfaces) {
    return new BridgeDomain(name, List.of(interfaces));
  }

  /** A member that is not the BVI. */
  public static Interface member(String name) {
    return new Interface(name, false);
  }

  /** A member that is the BVI. */
  public static Interface bvi(String name) {
    return new Interface(name, true);
  }

  @Override
  public String toString() {
    ProtoText t = new ProtoText().str("name", name);
    for (Interface i : interfaces) {
      t.message("interfaces", i);
    }
    return t.toString();
  }
}
