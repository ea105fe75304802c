package io.fencelock.spring;

import io.fencelock.LockClient;
import java.lang.reflect.Method;
import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;

/**
 * Puts {@link ExclusiveInterceptor} on the methods annotated with {@link Exclusive} (on the class or
 * on an interface), through Spring's own proxies: no AspectJ weaving. Ordered before the
 * transaction advice, so that a transaction commits before its lock is let go.
 */
public class ExclusiveAdvisor extends AbstractPointcutAdvisor implements BeanFactoryAware {
    private static final long serialVersionUID = 1L;
    private final transient ExclusiveInterceptor interceptor;
    private final transient Pointcut pointcut;

    public ExclusiveAdvisor(ObjectProvider<LockClient> clients) {
        this.interceptor = new ExclusiveInterceptor(clients);
        ExclusiveInterceptor methods = interceptor;
        this.pointcut = new StaticMethodMatcherPointcut() {
            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                return methods.find(method, targetClass) != null;
            }
        };
        setOrder(Ordered.LOWEST_PRECEDENCE - 1000);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        interceptor.setBeanFactory(beanFactory);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }
}
