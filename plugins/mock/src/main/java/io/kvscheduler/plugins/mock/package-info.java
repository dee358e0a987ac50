/**
 * The hands-on example of the KV Scheduler: mock interface and L2 plugins over an in-memory
 * southbound that prints every operation, the scenarios of the example, and plugin skeletons. Start
 * with {@link io.kvscheduler.plugins.mock.MockPlugins}.
 */
package io.kvscheduler.plugins.mock;
