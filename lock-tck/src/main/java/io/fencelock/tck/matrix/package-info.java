/**
 * The guarantee matrix: one result per property and fault (held, violated, not run; claimed or not),
 * recorded by a JUnit extension and written as JSON for the comparison report.
 */
package io.fencelock.tck.matrix;
