/**
 * JMH benchmarks of single operations, beside the comparison run.
 */
package io.fencelock.bench.jmh;
