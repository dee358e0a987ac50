/** Internals of the gRPC northbound: the services, model conversion, streams. */
package io.kvscheduler.grpc.internal;
