package io.fencelock.spring;

import io.fencelock.Lease;
import io.fencelock.LockMetadata;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.IntStream;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringValueResolver;

/**
 * One {@link Exclusive} method's settings, resolved and checked once when its bean is created: the
 * parsed lock-name expression, the durations (placeholders resolved) and where a {@link Lease}
 * parameter takes the lease.
 */
final class ExclusiveMethod {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

    final Method method;
    final Expression name;
    final Duration wait;
    final Duration ttl;
    final boolean autoRenew;
    final Duration minHold;
    final String type;
    final String owner;
    final int[] leaseParameters;
    private final String where;

    ExclusiveMethod(Method method, Exclusive annotation, StringValueResolver resolver) {
        this.method = method;
        this.where = "@Exclusive on " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
        try {
            this.name = PARSER.parseExpression(annotation.name());
        } catch (ParseException e) {
            throw new IllegalStateException(where + ": name \"" + annotation.name()
                    + "\" is not a SpEL expression (quote a constant name: \"'jobs:nightly'\"): " + e.getMessage());
        }
        this.wait = duration("waitFor", annotation.waitFor(), resolver, true);
        this.ttl = duration("ttl", annotation.ttl(), resolver, false);
        this.minHold = duration("minHold", annotation.minHold(), resolver, false);
        this.autoRenew = annotation.autoRenew();
        this.type = blankToNull(resolve(annotation.type(), resolver));
        this.owner = blankToNull(resolve(annotation.owner(), resolver));
        try {
            LockMetadata.NONE.withOwner(owner).withType(type); // the metadata rules, before the first call
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(where + ": " + e.getMessage(), e);
        }
        this.leaseParameters = IntStream.range(0, method.getParameterCount())
                .filter(i -> method.getParameterTypes()[i] == Lease.class)
                .toArray();
    }

    /** The lock name for one call: the expression over its arguments. */
    String lockName(Object target, Object[] arguments, BeanFactory beanFactory) {
        MethodBasedEvaluationContext context =
                new MethodBasedEvaluationContext(new Root(method, arguments, target), method, arguments, NAMES);
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        }
        Object value = name.getValue(context);
        if (value == null) {
            throw new IllegalArgumentException(
                    where + ": the lock name \"" + name.getExpressionString() + "\" gave null for these arguments");
        }
        return value.toString();
    }

    /** What the method returns when the lock was not obtained: nothing, in its return type. */
    Object skipped() {
        Class<?> type = method.getReturnType();
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (!type.isPrimitive() || type == void.class) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == char.class) {
            return '\0';
        }
        if (type == long.class) {
            return 0L;
        }
        if (type == double.class) {
            return 0.0d;
        }
        if (type == float.class) {
            return 0.0f;
        }
        if (type == short.class) {
            return (short) 0;
        }
        if (type == byte.class) {
            return (byte) 0;
        }
        return 0;
    }

    private Duration duration(String attribute, String raw, StringValueResolver resolver, boolean zeroAllowed) {
        String text = resolve(raw, resolver);
        if (text == null || text.isBlank()) {
            return null;
        }
        Duration d;
        try {
            d = org.springframework.boot.convert.DurationStyle.detectAndParse(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    where + ": " + attribute + " '" + text + "' is not a duration (e.g. 500ms, 10s, 5m, PT10S)");
        }
        if (d.isNegative() || (d.isZero() && !zeroAllowed)) {
            throw new IllegalStateException(where + ": " + attribute + " '" + text + "' must be "
                    + (zeroAllowed ? "zero or positive" : "positive"));
        }
        return d;
    }

    private static String resolve(String raw, StringValueResolver resolver) {
        return resolver == null || raw.isEmpty() ? raw : resolver.resolveStringValue(raw);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    @Override
    public String toString() {
        return where;
    }

    /**
     * The expression's root object: {@code #root.method}, {@code #root.args}, {@code #root.target}.
     *
     * @param method    the annotated method
     * @param args      the call's arguments
     * @param target    the bean
     */
    record Root(Method method, Object[] args, Object target) {}
}
