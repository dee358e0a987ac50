package io.kvscheduler.plugins.mock.ifplugin.model;

import io.kvscheduler.plugins.mock.util.ProtoText;

/**
 * A mock interface (model {@code mock.interfaces}, proto message {@code
 * mock.interfaces.Interface}). Absent fields take their proto3 defaults: {@code ""}, {@link
 * Type#UNDEFINED_TYPE}, {@code false}.
 *
 * @param name logical name, also the last part of the key
 * @param type LOOPBACK or TAP; UNDEFINED_TYPE is rejected by validation
 * @param enabled administrative state
 * @param physAddress MAC address, {@code ""} for none
 */
public record Interface(String name, Type type, boolean enabled, String physAddress) {

  /** Interface type; the first constant is the proto default. */
  public enum Type {
    UNDEFINED_TYPE,
    LOOPBACK,
    TAP
  }

  public Interface {
    name = name == null ? "" : name;
    type = type == null ? Type.UNDEFINED_TYPE : type;
    physAddress = physAddress == null ? "" : physAddress;
  }

  /** An interface without MAC address. */
  public static Interface of(String name, Type type, boolean enabled) {
    return new Interface(name, type, enabled, "");
  }

  /** This interface with another type. */
  public Interface withType(Type t) {
    return new Interface(name, t, enabled, physAddress);
  }

  /** This interface enabled or disabled. */
  public Interface withEnabled(boolean e) {
    return new Interface(name, type, e, physAddress);
  }

  /** This interface with another MAC address. */
  public Interface withPhysAddress(String mac) {
    return new Interface(name, type, enabled, mac);
  }

  @Override
  public String toString() {
    return new ProtoText()
        .str("name", name)
        .enumeration("type", type)
        .bool("enabled", enabled)
        .str("phys_address", physAddress)
        .toString();
  }
}
