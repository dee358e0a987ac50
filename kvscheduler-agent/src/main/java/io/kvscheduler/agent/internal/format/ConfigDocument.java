package io.kvscheduler.agent.internal.format;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.reader.ReaderException;

/**
 * A parsed JSON or YAML document that remembers the line of every object and array (the line of the
 * field name or list item that introduced it), so that errors found after parsing can name a line.
 */
public final class ConfigDocument {
  /**
   * The largest document read, in code points (characters; 256 Mi, about 4.5 million mock
   * interfaces in the YAML configuration format). SnakeYAML's own default, 3 Mi code points, would
   * reject what {@code GET /configuration} lists for some 60,000 interfaces. Parsing costs time
   * linear in the document's length.
   */
  public static final int MAX_CODE_POINTS = 256 * 1024 * 1024;

  /**
   * The longest string (a scalar value or a mapping key), in code points: 1 Mi. In YAML also the
   * longest run the scanner reads as one piece (a scalar's line, a comment, a run of spaces),
   * refused before it is read whole.
   */
  public static final int MAX_SCALAR_CODE_POINTS = 1024 * 1024;

  /** The most characters of a document's content an error message quotes in one piece: 40. */
  public static final int SNIPPET_LENGTH = 40;

  /** The deepest nesting of mappings and lists: 100 (the root mapping is level 1). */
  public static final int MAX_DEPTH = 100;

  /**
   * Jackson's own limits, above ours (chars, not code points: up to two per code point) so that
   * ours, which name the line and the limit in our terms, are met first.
   */
  private static final StreamReadConstraints CONSTRAINTS =
      StreamReadConstraints.builder()
          .maxDocumentLength(-1)
          .maxStringLength(2 * MAX_SCALAR_CODE_POINTS + 1)
          .maxNameLength(2 * MAX_SCALAR_CODE_POINTS + 1)
          .maxNestingDepth(MAX_DEPTH + 1)
          .build();

  private static final JsonFactory JSON =
      JsonFactory.builder().streamReadConstraints(CONSTRAINTS).build();

  /**
   * As {@code new YAMLFactory()}, with the size limit (the builder's defaults differ: without
   * {@code EMPTY_STRING_AS_NULL}, {@code key:} with no value would be "", not null), reading in
   * linear time ({@link LinearYamlReader}).
   */
  private static final YAMLFactory YAML =
      new LinearYamlFactory(
          YAMLFactory.builder()
              .loaderOptions(loaderOptions(MAX_CODE_POINTS))
              .streamReadConstraints(CONSTRAINTS)
              .enable(YAMLParser.Feature.EMPTY_STRING_AS_NULL),
          MAX_SCALAR_CODE_POINTS);

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final JsonNode root;

  /**
   * An object of a document with its line and the line of each of its fields, in the order the
   * fields were given. The lines ride on the nodes themselves: keeping them in maps keyed by node
   * identity cost about a fifth of a large file's parse (W9 of {@code BENCHMARKS.md}).
   */
  private static final class LinedObject extends ObjectNode {
    private static final long serialVersionUID = 1L;
    final int line;
    private int[] fieldLines = new int[4];

    /** By field name, built on the first lookup in a large object. */
    private transient Map<String, Integer> byName;

    LinedObject(int line) {
      super(NODES);
      this.line = line;
    }

    void addFieldLine(int index, int fieldLine) {
      if (index == fieldLines.length) {
        fieldLines = Arrays.copyOf(fieldLines, index * 2);
      }
      fieldLines[index] = fieldLine;
    }

    /** The line of the field at {@code index}, in the order given. */
    int fieldLineAt(int index) {
      return fieldLines[index];
    }

    /** The line of the field {@code name}, or null when it has none. */
    Integer fieldLine(String name) {
      if (size() > 16) {
        if (byName == null) {
          Map<String, Integer> m = new HashMap<>(size() * 2);
          int i = 0;
          for (Iterator<String> it = fieldNames(); it.hasNext(); i++) {
            m.put(it.next(), fieldLines[i]);
          }
          byName = m;
        }
        return byName.get(name);
      }
      int i = 0;
      for (Iterator<String> it = fieldNames(); it.hasNext(); i++) {
        if (it.next().equals(name)) {
          return fieldLines[i];
        }
      }
      return null;
    }
  }

  /** A list of a document with its line and the line of each of its items. */
  private static final class LinedArray extends ArrayNode {
    private static final long serialVersionUID = 1L;
    final int line;
    private int[] itemLines = new int[4];

    LinedArray(int line) {
      super(NODES);
      this.line = line;
    }

    void addItemLine(int index, int itemLine) {
      if (index == itemLines.length) {
        itemLines = Arrays.copyOf(itemLines, index * 2);
      }
      itemLines[index] = itemLine;
    }

    /** The line of item {@code i}, or null when out of range. */
    Integer itemLine(int i) {
      return i < size() ? itemLines[i] : null;
    }
  }

  /** The line the root starts on (a scalar root carries no line of its own). */
  private final int rootLine;

  private ConfigDocument(JsonNode root, int rootLine) {
    this.root = root;
    this.rootLine = rootLine;
  }

  /** A syntax error (or a duplicate mapping key) at a line (0 when unknown). */
  public static final class SyntaxException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int line;

    SyntaxException(String message, int line, Throwable cause) {
      super(message, cause);
      this.line = line;
    }

    /** 1-based line, 0 when unknown. */
    public int line() {
      return line;
    }
  }

  /**
   * A piece of a document's content as an error message may quote it: at most {@link
   * #SNIPPET_LENGTH} characters (followed by {@code …} when cut), control characters escaped
   * ({@code \n}, {@code \t}, {@code \r}, others as {@code \u0007}).
   */
  public static String snippet(String text) {
    String escaped = escapeControls(text);
    return escaped.length() <= SNIPPET_LENGTH
        ? escaped
        : escaped.substring(0, SNIPPET_LENGTH) + "…";
  }

  /**
   * An error message about a document made fit for a log that others may read: control characters
   * escaped, and every run of non-blank characters longer than {@link #SNIPPET_LENGTH} shortened as
   * {@link #snippet} does, unless {@code known} accepts it (without the quotes and punctuation
   * around it), e.g. a key of a registered model. Parse errors quote keys, values and tokens of the
   * document; a file that is no config file (a secret, a password hash) is thus never shown whole.
   */
  public static String quotable(String message, Predicate<String> known) {
    String escaped = escapeControls(message);
    StringBuilder out = new StringBuilder(escaped.length());
    int i = 0;
    while (i < escaped.length()) {
      int end = escaped.indexOf(' ', i);
      if (end < 0) {
        end = escaped.length();
      }
      String word = escaped.substring(i, end);
      if (word.length() > SNIPPET_LENGTH && !known.test(trimPunctuation(word))) {
        word = word.substring(0, SNIPPET_LENGTH) + "…";
      }
      out.append(word);
      if (end < escaped.length()) {
        out.append(' ');
      }
      i = end + 1;
    }
    return out.toString();
  }

  private static String trimPunctuation(String word) {
    int from = 0;
    int to = word.length();
    while (from < to && "'\"([{".indexOf(word.charAt(from)) >= 0) {
      from++;
    }
    while (to > from && "'\")]}:,;.".indexOf(word.charAt(to - 1)) >= 0) {
      to--;
    }
    return word.substring(from, to);
  }

  private static String escapeControls(String text) {
    StringBuilder b = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean control = Character.isISOControl(c) || c == (char) 0x2028 || c == (char) 0x2029;
      if (control && b == null) {
        b = new StringBuilder(text.length() + 16).append(text, 0, i);
      }
      if (b == null) {
        continue;
      }
      if (!control) {
        b.append(c);
      } else if (c == '\n') {
        b.append("\\n");
      } else if (c == '\t') {
        b.append("\\t");
      } else if (c == '\r') {
        b.append("\\r");
      } else {
        b.append(String.format("\\u%04x", (int) c));
      }
    }
    return b == null ? text : b.toString();
  }

  private static LoaderOptions loaderOptions(int codePointLimit) {
    LoaderOptions options = new LoaderOptions();
    options.setCodePointLimit(codePointLimit);
    return options;
  }

  /**
   * Parses YAML (which also accepts JSON).
   *
   * @throws SyntaxException also when {@code text} has more than {@link #MAX_CODE_POINTS}
   */
  public static ConfigDocument parseYaml(String text) throws SyntaxException {
    if (text.length() <= MAX_CODE_POINTS) {
      ConfigDocument inPieces = YamlPieces.parse(text);
      if (inPieces != null) {
        return inPieces;
      }
    }
    return parse(YAML, text, MAX_CODE_POINTS);
  }

  /**
   * A large YAML document read in pieces on two threads or more. The parse of a large file is most
   * of an agent's start on it (W9 of {@code BENCHMARKS.md}), and SnakeYAML reads on one thread.
   *
   * <p>Only a document whose every line at column 0 begins a top-level key can be cut there and
   * each piece read as a mapping of its own; so it is done only where that is certain, and anything
   * else is read whole: a document holding a character that may tie one part to another (an anchor
   * {@code &}, an alias {@code *}, a tag {@code !}, a directive {@code %}), a document marker
   * ({@code ---}, {@code ...}) or a line break other than {@code \n}; a piece that does not read as
   * a mapping (an open quote or flow collection, a syntax error); a key given in two pieces. The
   * whole reading then reports what is wrong, with its own words and lines, so errors are the same
   * either way; the values and every line of a document read in pieces are those of reading it
   * whole.
   */
  static final class YamlPieces {
    /** Below this many characters (1 Mi) a document is read whole. */
    static final int MIN_LENGTH = 1 << 20;

    private YamlPieces() {}

    /** The document read in pieces, or null when it is to be read whole. */
    static ConfigDocument parse(String text) {
      int threads = Math.min(4, Runtime.getRuntime().availableProcessors());
      return parse(text, threads, MIN_LENGTH);
    }

    /** As {@link #parse(String)}, into {@code pieces} pieces from {@code minLength} characters. */
    static ConfigDocument parse(String text, int pieces, int minLength) {
      if (pieces < 2 || text.length() < minLength || !cuttable(text)) {
        return null;
      }
      int[] starts = cuts(text, pieces);
      if (starts.length < 2) {
        return null;
      }
      List<CompletableFuture<LinedObject>> later = new ArrayList<>();
      int lines = 0;
      int counted = 0;
      for (int i = 1; i < starts.length; i++) {
        lines += newlines(text, counted, starts[i]);
        counted = starts[i];
        int from = starts[i];
        int to = i + 1 < starts.length ? starts[i + 1] : text.length();
        int offset = lines;
        later.add(CompletableFuture.supplyAsync(() -> piece(text.substring(from, to), offset)));
      }
      LinedObject first = piece(text.substring(0, starts[1]), 0);
      LinedObject root = first == null ? null : new LinedObject(first.line);
      boolean whole = root != null && merge(root, first);
      for (CompletableFuture<LinedObject> f : later) {
        LinedObject piece = f.join();
        whole = whole && piece != null && merge(root, piece);
      }
      return whole ? new ConfigDocument(root, root.line) : null;
    }

    /** Whether nothing in {@code text} may tie a piece to another (see the class comment). */
    private static boolean cuttable(String text) {
      int n = text.length();
      for (int i = 0; i < n; i++) {
        char c = text.charAt(i);
        switch (c) {
          case '&', '*', '!', '%', '\r', '\u0085', '\u2028', '\u2029', '\uFEFF' -> {
            return false;
          }
          case '\n' -> {
            if (text.startsWith("---", i + 1) || text.startsWith("...", i + 1)) {
              return false;
            }
          }
          default -> {}
        }
      }
      return !text.startsWith("---") && !text.startsWith("...") && keyFirst(text);
    }

    /**
     * Whether the first line holding more than a comment begins a key at column 0: then the root is
     * a mapping at column 0, and every line at column 0 begins one of its keys or a comment.
     */
    private static boolean keyFirst(String text) {
      int at = 0;
      while (at < text.length()) {
        char c = text.charAt(at);
        int end = text.indexOf('\n', at);
        end = end < 0 ? text.length() : end;
        if (c == '#' || text.substring(at, end).isBlank()) {
          at = end + 1;
          continue;
        }
        return keyStart(c);
      }
      return false;
    }

    /**
     * Where the pieces start: 0, then at most {@code pieces - 1} line starts near equal shares of
     * the text, each at a line beginning with a plain key (no indentation, comment, list item,
     * complex key, flow collection or quote).
     */
    private static int[] cuts(String text, int pieces) {
      List<Integer> starts = new ArrayList<>(List.of(0));
      for (int i = 1; i < pieces; i++) {
        int from =
            Math.max((int) ((long) text.length() * i / pieces), starts.get(starts.size() - 1));
        int at = from;
        while (true) {
          int nl = text.indexOf('\n', at);
          if (nl < 0 || nl + 1 >= text.length()) {
            at = -1;
            break;
          }
          if (keyStart(text.charAt(nl + 1))) {
            at = nl + 1;
            break;
          }
          at = nl + 1;
        }
        if (at < 0) {
          break;
        }
        if (at > starts.get(starts.size() - 1)) {
          starts.add(at);
        }
      }
      return starts.stream().mapToInt(Integer::intValue).toArray();
    }

    private static boolean keyStart(char c) {
      return c > ' ' && "#-?:[]{},'\"|>@`".indexOf(c) < 0;
    }

    private static int newlines(String text, int from, int to) {
      int count = 0;
      for (int i = from; i < to; i++) {
        if (text.charAt(i) == '\n') {
          count++;
        }
      }
      return count;
    }

    /** One piece read as a mapping, its lines moved by {@code lineOffset}; null otherwise. */
    private static LinedObject piece(String piece, int lineOffset) {
      try (JsonParser p = YAML.createParser(piece)) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          return null;
        }
        JsonNode root = read(p, line(p) + lineOffset, 1, lineOffset);
        return p.nextToken() == null && root instanceof LinedObject o ? o : null;
      } catch (IOException | SyntaxException | RuntimeException e) {
        return null; // read whole, which reports it
      }
    }

    /** Adds the fields of {@code piece} to {@code root}; false when one is there already. */
    private static boolean merge(LinedObject root, LinedObject piece) {
      int i = 0;
      for (Iterator<Map.Entry<String, JsonNode>> it = piece.fields(); it.hasNext(); i++) {
        Map.Entry<String, JsonNode> e = it.next();
        int index = root.size();
        if (root.putIfAbsent(e.getKey(), e.getValue()) != null) {
          return false;
        }
        root.addFieldLine(index, piece.fieldLineAt(i));
      }
      return true;
    }
  }

  /**
   * Parses strict JSON; a leading byte order mark (U+FEFF) is skipped, as YAML skips it.
   *
   * @throws SyntaxException also when {@code text} has more than {@link #MAX_CODE_POINTS}
   */
  public static ConfigDocument parseJson(String text) throws SyntaxException {
    return parse(JSON, withoutBom(text), MAX_CODE_POINTS);
  }

  /**
   * {@code text} without a leading byte order mark (U+FEFF, which editors on some systems put at
   * the start of UTF-8 files; Jackson's JSON parser rejects it in a string).
   */
  public static String withoutBom(String text) {
    return text.startsWith("\uFEFF") ? text.substring(1) : text;
  }

  /** Parses YAML with a lower size limit than {@link #MAX_CODE_POINTS} (for tests). */
  static ConfigDocument parseYaml(String text, int maxCodePoints) throws SyntaxException {
    return parse(YAML, text, Math.min(maxCodePoints, MAX_CODE_POINTS));
  }

  /** Parses JSON with a lower size limit than {@link #MAX_CODE_POINTS} (for tests). */
  static ConfigDocument parseJson(String text, int maxCodePoints) throws SyntaxException {
    return parse(JSON, withoutBom(text), Math.min(maxCodePoints, MAX_CODE_POINTS));
  }

  private static ConfigDocument parse(JsonFactory factory, String text, int maxCodePoints)
      throws SyntaxException {
    // checked here, not left to SnakeYAML (whose limit is the same), so that a document too large
    // is called that, not "malformed", in YAML and JSON alike; length() >= code points
    if (text.length() > maxCodePoints) {
      int codePoints = text.codePointCount(0, text.length());
      if (codePoints > maxCodePoints) {
        throw new SyntaxException(
            "too large (" + codePoints + " code points, limit " + maxCodePoints + ")", 0, null);
      }
    }
    try (JsonParser p = factory.createParser(text)) {
      JsonToken first = p.nextToken();
      if (first == null) {
        return new ConfigDocument(NullNode.getInstance(), 0);
      }
      int rootLine = line(p);
      JsonNode root = read(p, rootLine, 1, 0);
      if (p.nextToken() != null) {
        throw new SyntaxException("more than one document (only one is supported)", line(p), null);
      }
      return new ConfigDocument(root, rootLine);
    } catch (JsonProcessingException e) {
      throw syntaxError(factory == YAML ? "YAML" : "JSON", text, e);
    } catch (IOException e) {
      throw new SyntaxException("cannot parse: " + e.getMessage(), 0, e);
    }
  }

  private static SyntaxException syntaxError(
      String format, String text, JsonProcessingException e) {
    if (e.getCause() instanceof LinearYamlReader.TokenTooLong t) {
      return new SyntaxException("too large: " + t.getMessage(), t.line(), e);
    }
    if (e.getCause() instanceof ReaderException r) {
      return new SyntaxException(
          "malformed YAML: character U+"
              + String.format("%04X", r.getCodePoint())
              + " is not allowed in YAML",
          lineAtCodePoint(text, r.getPosition()),
          e);
    }
    if (e.getCause() instanceof MarkedYAMLException y && y.getProblemMark() != null) {
      // SnakeYAML knows the problem's own position, and where the construct it was in began
      String context =
          y.getContext() != null && y.getContextMark() != null
              ? " (" + y.getContext() + " at line " + (y.getContextMark().getLine() + 1) + ")"
              : "";
      return new SyntaxException(
          "malformed YAML: " + y.getProblem() + context, y.getProblemMark().getLine() + 1, e);
    }
    JsonLocation loc = e.getLocation();
    int line = loc != null && loc.getLineNr() > 0 ? loc.getLineNr() : 0;
    String msg = e.getOriginalMessage();
    int nl = msg == null ? -1 : msg.indexOf('\n');
    return new SyntaxException(
        (e instanceof StreamConstraintsException ? "too large: " : "malformed " + format + ": ")
            + (nl > 0 ? msg.substring(0, nl).strip() : msg),
        line,
        e);
  }

  /** The 1-based line of the code point at {@code index} of {@code text}. */
  private static int lineAtCodePoint(String text, int index) {
    int line = 1;
    int end =
        index <= 0
            ? 0
            : text.offsetByCodePoints(0, Math.min(index, text.codePointCount(0, text.length())));
    for (int i = 0; i < end; i++) {
      char c = text.charAt(i);
      if (c == '\n' || (c == '\r' && (i + 1 >= text.length() || text.charAt(i + 1) != '\n'))) {
        line++;
      }
    }
    return line;
  }

  private static int line(JsonParser p) {
    JsonLocation loc = p.currentTokenLocation();
    return loc == null ? 0 : Math.max(loc.getLineNr(), 0);
  }

  private static JsonNode read(JsonParser p, int line, int depth, int lineOffset)
      throws IOException, SyntaxException {
    JsonToken t = p.currentToken();
    if (depth > MAX_DEPTH && (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)) {
      throw new SyntaxException(
          "too deeply nested: more than "
              + MAX_DEPTH
              + " levels of mappings and lists (limit "
              + MAX_DEPTH
              + ")",
          line,
          null);
    }
    switch (t) {
      case START_OBJECT -> {
        LinedObject o = new LinedObject(line);
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          int fieldLine = line(p) + lineOffset;
          checkLength("key", name, fieldLine);
          p.nextToken();
          JsonNode v = read(p, fieldLine, depth + 1, lineOffset);
          int index = o.size();
          if (o.putIfAbsent(name, v) != null) {
            throw new SyntaxException("duplicate key '" + name + "'", fieldLine, null);
          }
          o.addFieldLine(index, fieldLine);
        }
        return o;
      }
      case START_ARRAY -> {
        LinedArray a = new LinedArray(line);
        while (p.nextToken() != JsonToken.END_ARRAY) {
          int itemLine = line(p) + lineOffset;
          int index = a.size();
          a.add(read(p, itemLine, depth + 1, lineOffset));
          a.addItemLine(index, itemLine);
        }
        return a;
      }
      case VALUE_STRING -> {
        return NODES.textNode(checkLength("string", p.getText(), line));
      }
      case VALUE_NUMBER_INT -> {
        return switch (p.getNumberType()) {
          case INT -> NODES.numberNode(p.getIntValue());
          case LONG -> NODES.numberNode(p.getLongValue());
          default -> NODES.numberNode(p.getBigIntegerValue());
        };
      }
      case VALUE_NUMBER_FLOAT -> {
        return NODES.numberNode(p.getDecimalValue());
      }
      case VALUE_TRUE -> {
        return NODES.booleanNode(true);
      }
      case VALUE_FALSE -> {
        return NODES.booleanNode(false);
      }
      case VALUE_NULL -> {
        return NODES.nullNode();
      }
      case VALUE_EMBEDDED_OBJECT -> {
        Object o = p.getEmbeddedObject();
        return o instanceof byte[] b ? NODES.binaryNode(b) : NODES.pojoNode(o);
      }
      default -> throw new SyntaxException("unexpected " + t, line, null);
    }
  }

  /** {@code s}, checked against {@link #MAX_SCALAR_CODE_POINTS}. */
  private static String checkLength(String what, String s, int line) throws SyntaxException {
    if (s.length() > MAX_SCALAR_CODE_POINTS) {
      int codePoints = s.codePointCount(0, s.length());
      if (codePoints > MAX_SCALAR_CODE_POINTS) {
        throw new SyntaxException(
            "too large: a "
                + what
                + " of "
                + codePoints
                + " characters (limit "
                + MAX_SCALAR_CODE_POINTS
                + ")",
            line,
            null);
      }
    }
    return s;
  }

  /** The root node; a {@link NullNode} for an empty document. */
  public JsonNode root() {
    return root;
  }

  /** The line of an object or array node of this document, or of its root; 0 when unknown. */
  public int lineOf(JsonNode node) {
    int l = node instanceof LinedObject o ? o.line : node instanceof LinedArray a ? a.line : 0;
    return l > 0 ? l : node == root ? rootLine : 0;
  }

  /**
   * The line of what {@code path} (field names and list indexes, outermost first) names inside
   * {@code node}, an object or array of this document: the line of the deepest field or item the
   * path reaches, else of {@code node}, else {@code fallback}. A field name also matches a field
   * spelled in the other case style ({@code phys_address} finds {@code physAddress}).
   */
  public int lineOf(JsonNode node, List<Object> path, int fallback) {
    int best = lineOf(node) > 0 ? lineOf(node) : fallback;
    JsonNode n = node;
    for (Object step : path) {
      Integer l = null;
      JsonNode next = null;
      if (step instanceof Integer i && n.isArray() && i < n.size()) {
        l = n instanceof LinedArray a ? a.itemLine(i) : null;
        next = n.get(i);
      } else if (step instanceof String name && n.isObject()) {
        String given = fieldNamed(n, name);
        l = given != null && n instanceof LinedObject o ? o.fieldLine(given) : null;
        next = given != null ? n.get(given) : null;
      }
      if (next == null) {
        break;
      }
      if (l != null && l > 0) {
        best = l;
      }
      n = next;
    }
    return best;
  }

  /** The field of {@code o} spelled {@code name}, or in the other case style; null if none. */
  private static String fieldNamed(JsonNode o, String name) {
    if (o.has(name)) {
      return name;
    }
    String wanted = name.replace("_", "").toLowerCase(Locale.ROOT);
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (f.replace("_", "").toLowerCase(Locale.ROOT).equals(wanted)) {
        return f;
      }
    }
    return null;
  }
}
