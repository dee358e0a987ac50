package io.kvscheduler.agent.spi;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The Jackson mapper under {@link ModelJsonCodec}: proto3 JSON's rules for values that are plain
 * classes (records): snake_case names, defaults left out when writing, absent fields as defaults,
 * strict scalar types, integers also as decimal strings, enums by name or number.
 */
final class Proto3JsonMapper {
  private Proto3JsonMapper() {}

  static ObjectMapper create() {
    ObjectMapper m =
        new ObjectMapper(JsonFactory.builder().streamReadConstraints(ModelJsonCodec.LIMITS).build())
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .setDefaultPropertyInclusion(
                JsonInclude.Value.construct(
                    JsonInclude.Include.CUSTOM,
                    JsonInclude.Include.ALWAYS,
                    ProtoDefault.class,
                    null))
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    // absent or null fields read as proto3's defaults: "", an empty list or map, the first
    // constant of an enum (below); numbers and booleans are primitives, absent = 0 and false
    for (Class<?> c : List.of(String.class, List.class, Map.class)) {
      m.configOverride(c).setSetterInfo(JsonSetter.Value.forValueNulls(Nulls.AS_EMPTY));
    }
    m.coercionConfigFor(LogicalType.Boolean)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
        .setAcceptBlankAsEmpty(false);
    m.coercionConfigFor(LogicalType.Float)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
        .setAcceptBlankAsEmpty(false);
    m.coercionConfigFor(LogicalType.Textual)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    m.coercionConfigFor(LogicalType.Integer)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
        .setAcceptBlankAsEmpty(false);
    SimpleModule proto3 = new SimpleModule("proto3-json");
    proto3.addDeserializer(int.class, new WholeNumber<>(int.class, false));
    proto3.addDeserializer(Integer.class, new WholeNumber<>(Integer.class, false));
    proto3.addDeserializer(long.class, new WholeNumber<>(long.class, true));
    proto3.addDeserializer(Long.class, new WholeNumber<>(Long.class, true));
    proto3.setDeserializerModifier(
        new BeanDeserializerModifier() {
          @Override
          public JsonDeserializer<?> modifyEnumDeserializer(
              DeserializationConfig config,
              JavaType type,
              BeanDescription beanDesc,
              JsonDeserializer<?> deserializer) {
            Object[] constants = type.getRawClass().getEnumConstants();
            return constants == null || constants.length == 0
                ? deserializer
                : new FirstConstantWhenAbsent(deserializer, constants[0]);
          }
        });
    m.registerModule(proto3);
    return m;
  }

  /**
   * A 32- or 64-bit integer field, as protobuf JSON reads one: a JSON number with no fraction
   * ({@code 1500}, {@code 1500.0}, {@code 1.5e3}) or a string holding one ({@code "1500"}: protobuf
   * JSON writes 64-bit integers as strings), within the type's range; anything else (a fraction,
   * padding, an empty string, {@code "null"}, a boolean) is refused.
   */
  private static final class WholeNumber<T> extends StdScalarDeserializer<T> {
    private static final long serialVersionUID = 1L;
    private static final Pattern NUMBER = Pattern.compile("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?");
    private final boolean wide;

    WholeNumber(Class<T> type, boolean wide) {
      super(type);
      this.wide = wide;
    }

    @Override
    @SuppressWarnings("unchecked")
    public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      BigDecimal d;
      switch (p.currentToken()) {
        case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> d = p.getDecimalValue();
        case VALUE_STRING -> {
          String text = p.getText();
          if (!NUMBER.matcher(text).matches()) {
            return (T) ctxt.handleWeirdStringValue(handledType(), text, "not an integer");
          }
          d = new BigDecimal(text);
        }
        default -> {
          return (T) ctxt.handleUnexpectedToken(handledType(), p);
        }
      }
      try {
        long v = d.toBigIntegerExact().longValueExact();
        Object boxed =
            wide ? (Object) Long.valueOf(v) : (Object) Integer.valueOf(Math.toIntExact(v));
        return (T) boxed;
      } catch (ArithmeticException e) {
        return (T) ctxt.handleWeirdNumberValue(handledType(), d, "not a whole number within range");
      }
    }

    @Override
    public T getNullValue(DeserializationContext ctxt) {
      Class<?> t = handledType();
      @SuppressWarnings("unchecked")
      T zero = (T) (t == int.class ? (Object) 0 : t == long.class ? (Object) 0L : null);
      return zero;
    }
  }

  /**
   * Proto3's default values, which protobuf JSON leaves out: the {@code valueFilter} of the
   * mapper's inclusion rule ({@code equals} answers true for a value to leave out).
   */
  static final class ProtoDefault {
    @Override
    public boolean equals(Object v) {
      return v == null
          || v instanceof Boolean b && !b
          || isZero(v)
          || v instanceof CharSequence cs && cs.length() == 0
          || v instanceof byte[] bytes && bytes.length == 0
          || v instanceof Collection<?> c && c.isEmpty()
          || v instanceof Map<?, ?> mp && mp.isEmpty()
          || v instanceof Enum<?> e && e.ordinal() == 0;
    }

    /** A numeric zero (not -0.0, which protobuf JSON keeps). */
    private static boolean isZero(Object v) {
      if (v instanceof BigDecimal d) {
        return d.signum() == 0;
      }
      if (v instanceof BigInteger i) {
        return i.signum() == 0;
      }
      if (v instanceof Double d) {
        return Double.doubleToRawLongBits(d) == 0;
      }
      if (v instanceof Float f) {
        return Float.floatToRawIntBits(f) == 0;
      }
      return v instanceof Number n && n.longValue() == 0;
    }

    @Override
    public int hashCode() {
      return 0;
    }
  }

  /** An enum deserializer for which an absent or null field is the enum's first constant. */
  private static final class FirstConstantWhenAbsent extends DelegatingDeserializer {
    private final Object first;

    FirstConstantWhenAbsent(JsonDeserializer<?> d, Object first) {
      super(d);
      this.first = first;
    }

    @Override
    protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> newDelegatee) {
      return new FirstConstantWhenAbsent(newDelegatee, first);
    }

    @Override
    public Object getNullValue(DeserializationContext ctxt) {
      return first;
    }

    @Override
    public Object getAbsentValue(DeserializationContext ctxt) {
      return first;
    }
  }
}
