/**
 * The README's example, checked by a test to be shown verbatim, and the demo of a frozen holder fenced
 * by its token.
 */
package io.fencelock.examples;
