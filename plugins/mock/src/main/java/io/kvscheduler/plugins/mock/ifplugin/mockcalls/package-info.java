/**
 * The interface plugin's southbound calls: an API the descriptor uses and an in-memory
 * implementation that prints every operation. Kept apart from the descriptor as the recommended
 * plugin layout says, so a real southbound can replace the mock behind the same interface.
 */
package io.kvscheduler.plugins.mock.ifplugin.mockcalls;
