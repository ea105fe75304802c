/**
 * Histories of recorded operations (invoke / ok / fail / info on one monotonic clock) and the pure
 * checker that judges them, one function per property, itself tested on synthetic histories.
 */
package io.fencelock.tck.history;
