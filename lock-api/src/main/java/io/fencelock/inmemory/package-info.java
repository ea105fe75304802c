/**
 * A lock backend in this JVM's memory ({@code inmemory:<store name>}), certified by the same
 * contract as the server backends: for unit tests of code that takes locks, and for the engine's own.
 */
package io.fencelock.inmemory;
