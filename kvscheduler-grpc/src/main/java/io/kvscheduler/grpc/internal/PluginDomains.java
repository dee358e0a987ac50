package io.kvscheduler.grpc.internal;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.kvscheduler.agent.spi.ConfigDomain;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code ligato.configurator.Config} with the plugins' domains: the wire contract's Config declares
 * ligato's domains only, and each plugin may add one field of its own ({@link ConfigDomain}). This
 * is the definition of Config with those fields declared, built at run time as {@code
 * ligato/configurator/configurator.proto} importing the plugins' files. Requests are read with it
 * (a plugin's field, unknown to the generated Config class, becomes a declared field), answers are
 * written with it (the field goes out at the plugin's number, with the plugin's message), and
 * server reflection describes the configurator with it.
 */
public final class PluginDomains {
  private final List<ConfigDomain> domains;
  private final FileDescriptor file;
  private final Descriptor config;

  /**
   * @param domains the plugins' domains
   * @throws IllegalArgumentException when a domain's field number or name is taken (by ligato's
   *     domains or another plugin's), or its message's file clashes with a file of that name
   */
  public PluginDomains(List<ConfigDomain> domains) {
    this.domains = List.copyOf(domains);
    FileDescriptor base = io.kvscheduler.grpc.proto.configurator.Config.getDescriptor().getFile();
    this.file = this.domains.isEmpty() ? base : extend(base, this.domains);
    this.config = file.findMessageTypeByName("Config");
  }

  private static FileDescriptor extend(FileDescriptor base, List<ConfigDomain> domains) {
    Descriptor declared = io.kvscheduler.grpc.proto.configurator.Config.getDescriptor();
    Map<Integer, String> numbers = new LinkedHashMap<>();
    Map<String, Integer> names = new LinkedHashMap<>();
    declared
        .getFields()
        .forEach(
            f -> {
              numbers.put(f.getNumber(), f.getName());
              names.put(f.getName(), f.getNumber());
            });
    FileDescriptorProto.Builder proto = base.toProto().toBuilder();
    DescriptorProto.Builder config =
        proto.getMessageTypeBuilderList().stream()
            .filter(m -> m.getName().equals(declared.getName()))
            .findFirst()
            .orElseThrow();
    Map<String, FileDescriptor> deps = new LinkedHashMap<>();
    base.getDependencies().forEach(d -> deps.put(d.getName(), d));
    for (ConfigDomain d : domains) {
      String taken = numbers.get(d.fieldNumber());
      if (taken != null) {
        throw new IllegalArgumentException(
            "config domain "
                + d.fieldName()
                + ": field number "
                + d.fieldNumber()
                + " of ligato.configurator.Config is taken by "
                + taken);
      }
      if (names.containsKey(d.fieldName())) {
        throw new IllegalArgumentException(
            "config domain "
                + d.fieldName()
                + " (field "
                + d.fieldNumber()
                + "): ligato.configurator.Config has a field of that name (number "
                + names.get(d.fieldName())
                + ")");
      }
      if (d.configData().getFullName().equals(declared.getFullName())) {
        throw new IllegalArgumentException(
            "config domain " + d.fieldName() + ": its message cannot be Config itself");
      }
      numbers.put(d.fieldNumber(), d.fieldName());
      names.put(d.fieldName(), d.fieldNumber());
      FileDescriptor f = d.configData().getFile();
      FileDescriptor known = deps.putIfAbsent(f.getName(), f);
      if (known == null) {
        proto.addDependency(f.getName());
      } else if (known != f) {
        throw new IllegalArgumentException(
            "config domain "
                + d.fieldName()
                + ": its message "
                + d.configData().getFullName()
                + " is defined in a file named "
                + f.getName()
                + ", the name of another file Config imports");
      }
      config.addField(
          FieldDescriptorProto.newBuilder()
              .setName(d.fieldName())
              .setNumber(d.fieldNumber())
              .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL)
              .setType(FieldDescriptorProto.Type.TYPE_MESSAGE)
              .setTypeName("." + d.configData().getFullName()));
    }
    try {
      return FileDescriptor.buildFrom(proto.build(), deps.values().toArray(FileDescriptor[]::new));
    } catch (DescriptorValidationException e) {
      throw new IllegalArgumentException(
          "the plugins' config domains do not fit ligato.configurator.Config: " + e.getMessage(),
          e);
    }
  }

  /** The plugins' domains. */
  public List<ConfigDomain> domains() {
    return domains;
  }

  /**
   * {@code ligato/configurator/configurator.proto} with the plugins' domains in Config (the
   * generated file when there is none).
   */
  public FileDescriptor file() {
    return file;
  }

  /** Config with the plugins' domains. */
  public Descriptor config() {
    return config;
  }

  /** The domain fields of Config: ligato's, then the plugins'. */
  List<FieldDescriptor> fields() {
    return config.getFields();
  }

  /**
   * {@code config} read with the plugins' domains declared (a plugin's field is no longer unknown).
   */
  Message read(io.kvscheduler.grpc.proto.configurator.Config config) {
    if (domains.isEmpty()) {
      return config;
    }
    try {
      return DynamicMessage.parseFrom(this.config, config.toByteString());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("cannot read back a Config message", e);
    }
  }

  /**
   * {@code config} (a message of {@link #config()}) as the generated Config: the plugins' fields
   * are kept as its unknown fields, so they go out on the wire as they are.
   */
  io.kvscheduler.grpc.proto.configurator.Config write(Message config) {
    if (config instanceof io.kvscheduler.grpc.proto.configurator.Config c) {
      return c;
    }
    try {
      return io.kvscheduler.grpc.proto.configurator.Config.parseFrom(config.toByteString());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("cannot write a Config message", e);
    }
  }
}
