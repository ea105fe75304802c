/** A Spring Boot application with the fencelock starter: a scheduled job on one node at a time, fenced writes. */
package io.fencelock.examples.spring;
