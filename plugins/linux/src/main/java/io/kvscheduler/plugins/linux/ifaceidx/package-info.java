/**
 * The interface metadata map: what the kernel assigned to each configured interface (its index),
 * where it lives, and a read-only typed view other descriptors and plugins use.
 */
package io.kvscheduler.plugins.linux.ifaceidx;
