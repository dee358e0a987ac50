/** The Linux networking plugin: models, descriptors and the calls that drive the kernel. */
package io.kvscheduler.plugins.linux;
