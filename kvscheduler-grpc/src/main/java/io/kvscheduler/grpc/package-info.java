/**
 * The agent's gRPC northbound, wire-compatible with vpp-agent's: {@link
 * io.kvscheduler.grpc.GrpcApi} (the services), {@link io.kvscheduler.grpc.GrpcServer} (Netty) and
 * {@link io.kvscheduler.grpc.GrpcSettings}.
 */
package io.kvscheduler.grpc;
