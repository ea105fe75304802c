/**
 * The MongoDB provider: one document per lock taken by a conditional {@code findOneAndUpdate} upsert
 * whose filter judges expiry on the server's clock; the token is {@code $inc}-ed in a document that is
 * never deleted. See the module's README.
 */
package io.fencelock.mongo;
