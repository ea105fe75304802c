package io.fencelock.spring;

import io.fencelock.Lease;
import io.fencelock.LockBackendException;
import io.fencelock.LockClient;
import io.fencelock.LockRequest;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * The {@link Exclusive} advice: acquires the lock, runs the method as
 * {@link LockRequest#runExclusively} does (a lost lease interrupts it and ends the call with
 * {@link io.fencelock.LeaseLostException}), and releases the lock, or shortens the lease to the
 * rest of the minimum hold.
 */
final class ExclusiveInterceptor implements MethodInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(ExclusiveInterceptor.class);
    private static final Duration SHORTEST_HOLD = Duration.ofMillis(1);
    /** A method without {@code @Exclusive}, in the cache. */
    private static final Object NONE = new Object();

    private final ObjectProvider<LockClient> clients;
    private final Map<MethodClassKey, Object> methods = new ConcurrentHashMap<>();
    private volatile BeanFactory beanFactory;

    ExclusiveInterceptor(ObjectProvider<LockClient> clients) {
        this.clients = clients;
    }

    void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    /**
     * The settings of {@code method} called on a {@code targetClass} bean, or null when it is not
     * exclusive; the annotation is found on the class's method or on the interface method it
     * implements. Checked (and cached) when the bean is created, so a bad attribute stops start-up.
     */
    ExclusiveMethod find(Method method, Class<?> targetClass) {
        Object found = methods.computeIfAbsent(new MethodClassKey(method, targetClass), key -> {
            Method specific =
                    BridgeMethodResolver.findBridgedMethod(AopUtils.getMostSpecificMethod(method, targetClass));
            Exclusive annotation = AnnotatedElementUtils.findMergedAnnotation(specific, Exclusive.class);
            if (annotation == null) {
                return NONE;
            }
            ConfigurableBeanFactory factory = beanFactory instanceof ConfigurableBeanFactory c ? c : null;
            return new ExclusiveMethod(specific, annotation, factory == null ? null : factory::resolveEmbeddedValue);
        });
        return found == NONE ? null : (ExclusiveMethod) found;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        ExclusiveMethod settings =
                find(invocation.getMethod(), target == null ? null : AopUtils.getTargetClass(target));
        if (settings == null) {
            return invocation.proceed();
        }
        String name = settings.lockName(target, invocation.getArguments(), beanFactory);
        LockRequest request = clients.getObject().lock(name).autoRenew(settings.autoRenew);
        if (settings.ttl != null) {
            request.ttl(settings.ttl);
        }
        if (settings.type != null) {
            request.type(settings.type);
        }
        if (settings.owner != null) {
            request.owner(settings.owner);
        }
        AtomicBoolean ran = new AtomicBoolean();
        Optional<Object> result;
        try {
            result = request.runExclusively(settings.wait == null ? Duration.ZERO : settings.wait, lease -> {
                ran.set(true);
                return runHolding(lease, invocation, settings);
            });
        } catch (Carrier carrier) {
            throw carrier.getCause();
        }
        if (!ran.get()) {
            LOG.debug("{}: lock '{}' is held elsewhere; this run is skipped", settings, name);
            return settings.skipped();
        }
        return result.orElse(null);
    }

    private static Object runHolding(Lease lease, MethodInvocation invocation, ExclusiveMethod settings)
            throws Exception {
        long start = System.nanoTime();
        Object[] arguments = invocation.getArguments();
        for (int i : settings.leaseParameters) {
            arguments[i] = lease; // the invocation's own array: the method receives it
        }
        Lease hidden = ExclusiveContext.enter(lease);
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable other) {
            throw new Carrier(other);
        } finally {
            ExclusiveContext.restore(hidden);
            holdOn(lease, settings, start);
        }
    }

    /** Keeps the lock until the minimum hold ends: one renewal to the time left, then the client lets go. */
    private static void holdOn(Lease lease, ExclusiveMethod settings, long startNanos) {
        if (settings.minHold == null) {
            return;
        }
        Duration left = settings.minHold.minusNanos(System.nanoTime() - startNanos);
        if (left.compareTo(SHORTEST_HOLD) < 0) {
            return;
        }
        try {
            lease.releaseAfter(left);
        } catch (LockBackendException e) {
            // the lease is released as usual; the next node may run the slot before minHold ends
            LOG.warn("{}: could not keep '{}' for the minimum hold: {}", settings, lease.name(), e.toString());
        }
    }

    /** Carries a throwable that is neither an Exception nor an Error through {@link io.fencelock.LeaseTask}. */
    private static final class Carrier extends UndeclaredThrowableException {
        private static final long serialVersionUID = 1L;

        Carrier(Throwable cause) {
            super(cause);
        }
    }
}
