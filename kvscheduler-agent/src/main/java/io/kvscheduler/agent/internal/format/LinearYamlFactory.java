package io.kvscheduler.agent.internal.format;

import com.fasterxml.jackson.core.ObjectCodec;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactoryBuilder;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import org.yaml.snakeyaml.parser.ParserImpl;

/**
 * Jackson's YAML factory whose parsers read through a {@link LinearYamlReader}: time linear in the
 * document, and no token longer than a limit. Parsers are made for text ({@link
 * #createParser(String)}); other sources are read into a string first.
 */
final class LinearYamlFactory extends YAMLFactory {
  private static final long serialVersionUID = 1L;
  private final int maxToken;

  LinearYamlFactory(YAMLFactoryBuilder builder, int maxToken) {
    super(builder);
    this.maxToken = maxToken;
  }

  @Override
  public YAMLParser createParser(String content) throws IOException {
    return parser(content, _createContext(_createContentReference(content), false));
  }

  @Override
  protected YAMLParser _createParser(Reader r, IOContext ctxt) throws IOException {
    StringBuilder b = new StringBuilder();
    char[] buf = new char[8192];
    for (int n; (n = r.read(buf)) > 0; ) {
      b.append(buf, 0, n);
    }
    return parser(b.toString(), ctxt);
  }

  @Override
  protected YAMLParser _createParser(
      char[] data, int offset, int len, IOContext ctxt, boolean recyclable) throws IOException {
    return parser(new String(data, offset, len), ctxt);
  }

  private YAMLParser parser(String text, IOContext ctxt) {
    ParserImpl events = new ParserImpl(new LinearYamlReader(text, maxToken), _loaderOptions);
    return new Parser(
        ctxt, _parserFeatures, _yamlParserFeatures, _objectCodec, new StringReader(text), events);
  }

  /** YAMLParser's constructor that takes the event source is protected. */
  private static final class Parser extends YAMLParser {
    Parser(
        IOContext ctxt,
        int parserFeatures,
        int formatFeatures,
        ObjectCodec codec,
        Reader reader,
        ParserImpl events) {
      super(ctxt, parserFeatures, formatFeatures, codec, reader, events);
    }
  }
}
