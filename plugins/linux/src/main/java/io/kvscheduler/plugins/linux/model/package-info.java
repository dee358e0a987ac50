/**
 * The Linux models (protobuf messages generated from the plugin's {@code .proto} files, in the
 * sub-packages {@code interfaces}, {@code l3} and {@code namespace}), their agent models and the
 * keys of their values, derived values and watched host state.
 */
package io.kvscheduler.plugins.linux.model;
