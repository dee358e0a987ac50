package io.kvscheduler.plugins.mock.ifplugin.descriptor;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.mock.ifplugin.mockcalls.MockIfaceApi;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.util.MacAddress;
import io.kvscheduler.plugins.mock.util.SbIndex;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Teaches the scheduler to configure mock interfaces.
 *
 * <ul>
 *   <li>Keys {@code config/mock/v1/interfaces/<name>}; metadata {@link SbIndex} (the SB handle),
 *       kept in the metadata map {@value #NAME} with the secondary index {@value #SB_INDEX} (handle
 *       → interface name).
 *   <li>Validate: name set and at most 15 bytes, type set, MAC (if any) well-formed.
 *   <li>Create: loopback or TAP, then admin up if enabled, then the MAC if set. Update: admin state
 *       and a non-empty new MAC. A type change re-creates the interface.
 *   <li>Equivalence: name, type and admin state equal, and the new MAC empty (the SB keeps its MAC)
 *       or equal ignoring case.
 *   <li>Retrieve: every interface of the SB, handles ascending.
 * </ul>
 */
public final class InterfaceDescriptor {
  /** Descriptor name, also the name of its metadata map. */
  public static final String NAME = "mock-interface";

  /** Secondary index of the metadata map: SB handle (decimal) → interface name. */
  public static final String SB_INDEX = "sb-index";

  /** Longest interface name accepted (in bytes), to showcase validation. */
  public static final int NAME_LENGTH_LIMIT = 15;

  private final MockIfaceApi sb;

  private InterfaceDescriptor(MockIfaceApi sb) {
    this.sb = sb;
  }

  /** The descriptor working over {@code sb}. */
  public static KVDescriptor<Interface, SbIndex> create(MockIfaceApi sb) {
    InterfaceDescriptor d = new InterfaceDescriptor(sb);
    return KVDescriptor.builder(NAME, Interface.class)
        .withMetadata(SbIndex.class)
        .metadataIndex(SB_INDEX, meta -> List.of(Integer.toString(meta.index())))
        .valueTypeName(InterfaceModel.PROTO_NAME)
        .nbKeyPrefix(InterfaceModel.KEY_PREFIX)
        .keySelector(InterfaceModel::isKey)
        .keyLabel(InterfaceModel::name)
        .equivalence(InterfaceDescriptor::equivalent)
        .validate(InterfaceDescriptor::validate)
        .create(d::createInterface)
        .update(d::update)
        .updateWithRecreate((key, oldIf, newIf, meta) -> oldIf.type() != newIf.type())
        .delete(d::delete)
        .retrieve(d::retrieve)
        .build();
  }

  static boolean equivalent(String key, Interface oldIf, Interface newIf) {
    if (!oldIf.name().equals(newIf.name())
        || oldIf.type() != newIf.type()
        || oldIf.enabled() != newIf.enabled()) {
      return false;
    }
    return newIf.physAddress().isEmpty()
        || oldIf
            .physAddress()
            .toLowerCase(Locale.ROOT)
            .equals(newIf.physAddress().toLowerCase(Locale.ROOT));
  }

  static void validate(String key, Interface iface) {
    if (iface.name().isEmpty()) {
      throw new InvalidValueException("mock interface defined without logical name", "name");
    }
    if (iface.name().getBytes(StandardCharsets.UTF_8).length > NAME_LENGTH_LIMIT) {
      throw new InvalidValueException(
          "mock interface logical name exceeds the length limit (15 characters)", "name");
    }
    if (iface.type() == Interface.Type.UNDEFINED_TYPE) {
      throw new InvalidValueException("mock interface defined without type", "type");
    }
    if (!iface.physAddress().isEmpty() && !MacAddress.isValid(iface.physAddress())) {
      throw new InvalidValueException(
          "address " + Excerpt.quote(iface.physAddress()) + ": invalid MAC address",
          "phys_address");
    }
  }

  private SbIndex createInterface(String key, Interface iface) {
    int handle =
        iface.type() == Interface.Type.LOOPBACK
            ? sb.createLoopbackInterface(iface.name())
            : sb.createTapInterface(iface.name());
    if (iface.enabled()) {
      sb.interfaceAdminUp(handle);
    }
    if (!iface.physAddress().isEmpty()) {
      sb.setInterfaceMac(handle, iface.physAddress());
    }
    return new SbIndex(handle);
  }

  private SbIndex update(String key, Interface oldIf, Interface newIf, SbIndex meta) {
    // name changes make another key; type changes are re-created (updateWithRecreate)
    if (oldIf.enabled() != newIf.enabled()) {
      if (newIf.enabled()) {
        sb.interfaceAdminUp(meta.index());
      } else {
        sb.interfaceAdminDown(meta.index());
      }
    }
    if (!newIf.physAddress().isEmpty() && !newIf.physAddress().equals(oldIf.physAddress())) {
      sb.setInterfaceMac(meta.index(), newIf.physAddress());
    }
    return meta;
  }

  private void delete(String key, Interface iface, SbIndex meta) {
    if (iface.type() == Interface.Type.LOOPBACK) {
      sb.deleteLoopbackInterface(meta.index());
    } else {
      sb.deleteTapInterface(meta.index());
    }
  }

  private List<KVWithMetadata<Interface, SbIndex>> retrieve(
      List<KVWithMetadata<Interface, SbIndex>> correlate) {
    List<KVWithMetadata<Interface, SbIndex>> out = new ArrayList<>();
    for (Map.Entry<Integer, Interface> e : sb.dumpInterfaces().entrySet()) {
      out.add(
          new KVWithMetadata<>(
              InterfaceModel.key(e.getValue()),
              e.getValue(),
              new SbIndex(e.getKey()),
              ValueOrigin.FROM_NB));
    }
    return out;
  }
}
