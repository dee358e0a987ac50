/**
 * Plugin skeletons to copy when starting a new plugin. Two complete, tested variants:
 *
 * <ul>
 *   <li>{@link io.kvscheduler.plugins.mock.skeleton.nometa} — a descriptor without metadata (static
 *       routes that depend on a mock interface);
 *   <li>{@link io.kvscheduler.plugins.mock.skeleton.withmeta} — a descriptor with metadata (an SB
 *       handle), a metadata map with secondary indexes exposed read-only, and derived values
 *       handled by a second descriptor (tunnels and their addresses).
 * </ul>
 *
 * <p>Each follows the same layout: {@code model} (value records and keys), {@code mockcalls} (the
 * southbound API as an interface, with an in-memory implementation), {@code descriptor} (the {@link
 * io.kvscheduler.api.KVDescriptor}s) and a plugin class that registers them. The guide {@code
 * docs/writing-a-descriptor.md} walks through them.
 */
package io.kvscheduler.plugins.mock.skeleton;
