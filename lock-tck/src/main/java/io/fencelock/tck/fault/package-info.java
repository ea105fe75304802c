/**
 * The fault tools: a TCP proxy that drops, delays, resets and blackholes connections, lock holders and
 * coordination candidates in child JVMs that can be frozen ({@code SIGSTOP}) or killed, and the fault
 * scenarios the contract runs with them.
 */
package io.fencelock.tck.fault;
