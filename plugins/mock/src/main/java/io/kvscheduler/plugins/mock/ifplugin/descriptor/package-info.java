/** The interface plugin's descriptor. */
package io.kvscheduler.plugins.mock.ifplugin.descriptor;
