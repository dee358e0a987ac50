package io.kvscheduler.grpc.internal;

import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.api.Excerpt;
import io.kvscheduler.grpc.proto.generic.KnownModelsRequest;
import io.kvscheduler.grpc.proto.generic.KnownModelsResponse;
import io.kvscheduler.grpc.proto.generic.MetaServiceGrpc;
import io.kvscheduler.grpc.proto.generic.ModelDetail;
import io.kvscheduler.grpc.proto.generic.ModelSpec;
import io.kvscheduler.grpc.proto.generic.ProtoFileDescriptorRequest;
import io.kvscheduler.grpc.proto.generic.ProtoFileDescriptorResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@code ligato.generic.MetaService}: the registered models and their proto files, so that a client
 * can build values of models it learns at run time.
 */
public final class MetaServiceImpl extends MetaServiceGrpc.MetaServiceImplBase {
  private final ProtoModels models;

  public MetaServiceImpl(ProtoModels models) {
    this.models = models;
  }

  @Override
  public void knownModels(KnownModelsRequest request, StreamObserver<KnownModelsResponse> out) {
    Calls.unary(
        out,
        () -> {
          KnownModelsResponse.Builder r = KnownModelsResponse.newBuilder();
          for (Model<?> m : models.registry().models()) {
            if (!request.getClass_().isEmpty() && !request.getClass_().equals(m.modelClass())) {
              continue;
            }
            Optional<Descriptor> d = models.descriptor(m);
            ModelDetail.Builder detail =
                ModelDetail.newBuilder()
                    .setSpec(
                        ModelSpec.newBuilder()
                            .setModule(m.module())
                            .setVersion(m.version())
                            .setType(m.type())
                            .setClass_(m.modelClass()))
                    .setProtoName(d.map(Descriptor::getFullName).orElse(m.protoName()));
            if (m.named()) {
              detail.addOptions(
                  ModelDetail.Option.newBuilder()
                      .setKey("nameTemplate")
                      .addValues(m.nameTemplate()));
            }
            d.ifPresent(
                x ->
                    detail.addOptions(
                        ModelDetail.Option.newBuilder()
                            .setKey("protoFile")
                            .addValues(x.getFile().getName())));
            r.addKnownModels(detail);
          }
          return r.build();
        });
  }

  @Override
  public void protoFileDescriptor(
      ProtoFileDescriptorRequest request, StreamObserver<ProtoFileDescriptorResponse> out) {
    Calls.unary(
        out,
        () -> {
          String name = request.getFullProtoFileName();
          FileDescriptor file =
              models
                  .modelFile(name)
                  .orElseThrow(
                      () ->
                          Status.NOT_FOUND
                              .withDescription(
                                  "no registered model is defined in proto file '"
                                      + Excerpt.quote(name)
                                      + "'")
                              .asRuntimeException());
          Map<String, FileDescriptor> imports = new LinkedHashMap<>();
          file.getDependencies().forEach(d -> collect(d, imports));
          FileDescriptorSet.Builder set = FileDescriptorSet.newBuilder();
          imports.values().forEach(f -> set.addFile(f.toProto()));
          return ProtoFileDescriptorResponse.newBuilder()
              .setFileDescriptor(file.toProto())
              .setFileImportDescriptors(set)
              .build();
        });
  }

  /** {@code file} and its imports, each once, imports first. */
  private static void collect(FileDescriptor file, Map<String, FileDescriptor> out) {
    if (out.containsKey(file.getName())) {
      return;
    }
    file.getDependencies().forEach(d -> collect(d, out));
    out.put(file.getName(), file);
  }
}
