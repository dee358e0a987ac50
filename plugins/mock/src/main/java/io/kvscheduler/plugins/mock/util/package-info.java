/** Helpers shared by the mock plugins: MAC address checks, SB handles, operation printing. */
package io.kvscheduler.plugins.mock.util;
