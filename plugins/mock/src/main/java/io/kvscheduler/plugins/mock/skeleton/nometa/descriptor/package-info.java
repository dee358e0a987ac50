/**
 * The route descriptor: what the scheduler needs to know about routes, and the callbacks that turn
 * its decisions into southbound calls.
 */
package io.kvscheduler.plugins.mock.skeleton.nometa.descriptor;
