/**
 * The route model: the value record and its keys. Replace with your own value type; a record gives
 * the scheduler a correct {@code equals} (the default value comparison) for free.
 */
package io.kvscheduler.plugins.mock.skeleton.nometa.model;
