/** The interface plugin's model: the value class and its keys. */
package io.kvscheduler.plugins.mock.ifplugin.model;
