package io.kvscheduler.internal.util;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Excerpt;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Bounded excerpts and escaped control characters of user data. */
class ExcerptTest {
  @Test
  @DisplayName("a long text is cut with the count of characters left out; a cut text stays")
  void cut() {
    String big = "a".repeat(10_000);
    String q = Excerpt.quote(big);
    assertThat(q)
        .startsWith("a".repeat(Excerpt.MAX_QUOTED_CHARS) + "… ")
        .endsWith((10_000 - Excerpt.MAX_QUOTED_CHARS) + " more characters");
    assertThat(Excerpt.quote(q)).isSameAs(q);
    String m = Excerpt.message(big);
    assertThat(Excerpt.message(m)).isSameAs(m);
    String shortText = "short";
    assertThat(Excerpt.quote(shortText)).isSameAs(shortText);
    assertThat(Excerpt.quote((Object) null)).isEqualTo("null");
  }

  @Test
  @DisplayName("a cut does not split a surrogate pair")
  void surrogatePairs() {
    String text = "a".repeat(Excerpt.MAX_QUOTED_CHARS - 1) + "😀".repeat(100);
    String q = Excerpt.quote(text);
    assertThat(q).startsWith("a".repeat(Excerpt.MAX_QUOTED_CHARS - 1) + "…");
    assertThat(q.codePoints()).noneMatch(cp -> cp >= 0xD800 && cp <= 0xDFFF);
  }

  @Test
  @DisplayName("C0 controls, DEL and C1 controls are escaped; line feeds kept when asked")
  void escaped() {
    assertThat(Excerpt.escaped("a\nb\rc\td\u001b[31me\u0000f\u007fg\u009bh\u00a0é"))
        .isEqualTo("a\\nb\\rc\\td\\u001b[31me\\u0000f\\u007fg\\u009bh\u00a0é");
    assertThat(Excerpt.escaped("line 1\nline\r2", true)).isEqualTo("line 1\nline\\r2");
    String plain = "config/mock/v1/interfaces/tap1";
    assertThat(Excerpt.escaped(plain)).isSameAs(plain);
  }
}
