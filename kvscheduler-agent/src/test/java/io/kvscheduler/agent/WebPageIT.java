package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.testsupport.EtcdFixture;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.TimeoutException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's web page in a real browser (headless Chromium, Debian packages {@code chromium} and
 * {@code chromium-driver}): the agent runs on the example configuration with the mock plugins.
 */
class WebPageIT {
  private static final Logger LOG = LoggerFactory.getLogger(WebPageIT.class);
  static final String FIB20 = "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:20";
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String TAP2 = "config/mock/v1/interfaces/tap2";
  static final String BD1 = "config/mock/v1/bridge-domain/bd1";
  static final String BD1_TAP2 = "mock/bd/bd1/interface/tap2";

  /** The bound within which the page draws an agent of 10,000 values (measured, logged). */
  static final Duration BIG_GRAPH_BOUND = Duration.ofSeconds(20);

  @TempDir Path dir;
  Agent agent;
  String url;
  ChromeDriver browser;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    Path config = Files.createDirectories(dir.resolve("config"));
    Path examples = examples();
    for (String f : List.of("interfaces.yaml", "l2.yaml")) {
      Files.copy(examples.resolve(f), config.resolve(f));
    }
    agent =
        Agent.start(
            AgentConfig.builder()
                .configDir(config)
                .restAddress("127.0.0.1:0")
                .printTxnSummary(false)
                .build());
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    url = "http://127.0.0.1:" + port;

    ChromeOptions options = new ChromeOptions();
    options.setBinary("/usr/bin/chromium");
    options.addArguments(
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,900",
        "--user-data-dir=" + Files.createDirectories(dir.resolve("chromium-profile")));
    // the console, to find what the page's Content-Security-Policy refused
    options.setCapability("goog:loggingPrefs", java.util.Map.of("browser", "ALL"));
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new File("/usr/bin/chromedriver"))
            .usingAnyFreePort()
            .build();
    browser = new ChromeDriver(service, options);
    browser.manage().timeouts().scriptTimeout(Duration.ofSeconds(30));
  }

  @AfterEach
  void stop() {
    if (browser != null) {
      List<String> refused =
          browser.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
              .map(org.openqa.selenium.logging.LogEntry::getMessage)
              .filter(m -> m.contains("Content Security Policy") || m.contains("Refused to"))
              .toList();
      browser.quit();
      assertThat(refused).as("what the page's Content-Security-Policy refused").isEmpty();
    }
    if (agent != null) {
      agent.close();
    }
  }

  static Path examples() {
    Path p = Path.of("").toAbsolutePath();
    while (!Files.isDirectory(p.resolve("examples/config"))) {
      p = p.getParent();
    }
    return p.resolve("examples/config");
  }

  WebElement node(String key) {
    return browser.findElement(By.cssSelector(".node[data-key='" + key + "']"));
  }

  /** Waits, ignoring elements replaced while the page draws again. */
  WebDriverWait waiting(Duration d) {
    WebDriverWait w = new WebDriverWait(browser, d);
    w.ignoring(StaleElementReferenceException.class);
    return w;
  }

  int put(String yaml) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url + "/configuration"))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(yaml))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  @Test
  void pendingValueTurnsConfiguredLiveAndShowsItsStatus() throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> !b.findElements(By.cssSelector(".node[data-key='" + FIB20 + "']")).isEmpty());
    WebElement fib = node(FIB20);
    assertThat(fib.getAttribute("data-state")).isEqualTo("PENDING");
    // state and reason in text, not colour only
    assertThat(fib.getText()).contains("PENDING").contains("waits for");
    assertThat(fib.getAttribute("aria-label")).contains("PENDING");
    waiting(Duration.ofSeconds(10))
        .until(b -> b.findElement(By.id("live")).getText().equals("live"));
    // its status panel explains the wait: the missing interface
    fib.click();
    waiting(Duration.ofSeconds(10))
        .until(
            b ->
                b.findElement(By.id("d-explain"))
                    .getText()
                    .contains("config/mock/v1/interfaces/tap2"));
    assertThat(browser.findElement(By.id("d-state")).getText()).isEqualTo("PENDING");
    assertThat(browser.findElement(By.id("d-details")).getText()).contains("bridged-interface");
    screenshot("web-page.png");

    // a mark that a reload would lose
    ((JavascriptExecutor) browser).executeScript("window.notReloaded = true;");
    assertThat(
            put(
                """
        mockConfig:
          Interface_list:
          - name: tap2
            type: TAP
        """))
        .isEqualTo(200);
    assertThat(agent.scheduler().valueStatus(FIB20).state()).isEqualTo(ValueState.CONFIGURED);
    waiting(Duration.ofSeconds(20))
        .until(b -> "CONFIGURED".equals(node(FIB20).getAttribute("data-state")));
    assertThat(((JavascriptExecutor) browser).executeScript("return window.notReloaded"))
        .isEqualTo(Boolean.TRUE);
    // what the last transaction changed is highlighted
    assertThat(node(FIB20).getAttribute("class")).contains("changed");
    assertThat(node(TAP1).getAttribute("class")).doesNotContain("changed");
    // exactly the keys of its executed operations: not the bridge domain or its other members,
    // which its status events name too
    assertThat(node(TAP2).getAttribute("class")).contains("changed");
    assertThat(node(BD1_TAP2).getAttribute("class")).contains("changed");
    assertThat(node(BD1).getAttribute("class")).doesNotContain("changed");
    assertThat(node("mock/bd/bd1/interface/tap1").getAttribute("class")).doesNotContain("changed");

    // click a value: its status panel
    node(TAP1).click();
    waiting(Duration.ofSeconds(10))
        .until(b -> b.findElement(By.id("d-state")).getText().equals("CONFIGURED"));
    assertThat(browser.findElement(By.id("d-key")).getText()).isEqualTo(TAP1);
    assertThat(browser.findElement(By.id("d-lastop")).getText()).isEqualTo("CREATE");
    waiting(Duration.ofSeconds(10))
        .until(b -> b.findElement(By.id("d-value")).getText().contains("aa:bb:cc:00:00:01"));
    // its metadata: the mock southbound's handle, as the metadata index shows it
    assertThat(browser.findElement(By.id("d-metadata")).getText()).contains("sb-index");
    assertThat(browser.findElements(By.cssSelector("#d-timeline tbody tr"))).isNotEmpty();

    // keyboard: Tab reaches a value and Enter selects it
    WebElement fibNode = node(FIB20);
    ((JavascriptExecutor) browser).executeScript("arguments[0].focus()", fibNode);
    fibNode.sendKeys(Keys.ENTER);
    waiting(Duration.ofSeconds(10))
        .until(b -> b.findElement(By.id("d-key")).getText().equals(FIB20));

    screenshot("web-page-live.png");
  }

  int putConfirmed(String yaml) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url + "/configuration?confirm-within=1m"))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(yaml))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  @Test
  void aPendingConfirmationShowsItsDeadlineAndAConfirmButtonAndARollbackIsMarked()
      throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> b.findElement(By.id("live")).getText().equals("live"));
    assertThat(browser.findElement(By.id("pending")).isDisplayed()).isFalse();
    String tap =
        "mockConfig:\n  Interface_list:\n  - name: tapc\n    type: TAP\n    enabled: true\n";
    assertThat(putConfirmed(tap)).isEqualTo(200);
    waiting(Duration.ofSeconds(20)).until(b -> b.findElement(By.id("pending")).isDisplayed());
    assertThat(browser.findElement(By.id("pending-text")).getText())
        .contains("Confirmed commit #1 from rest")
        .contains("rolled back at")
        .contains("unless confirmed");
    browser.findElement(By.id("pending-confirm")).click();
    waiting(Duration.ofSeconds(20)).until(b -> !b.findElement(By.id("pending")).isDisplayed());
    assertThat(agent.confirmations().pending()).isEmpty();
    assertThat(agent.northbound().desired()).containsKey("config/mock/v1/interfaces/tapc");

    assertThat(putConfirmed(tap.replace("tapc", "tapd"))).isEqualTo(200);
    waiting(Duration.ofSeconds(20)).until(b -> b.findElement(By.id("pending")).isDisplayed());
    browser.findElement(By.id("pending-rollback")).click();
    waiting(Duration.ofSeconds(20))
        .until(
            b ->
                b.findElements(By.cssSelector("#txns li.rollback")).stream()
                    .anyMatch(li -> li.getText().contains("rollback: requested")));
    assertThat(agent.northbound().desired()).doesNotContainKey("config/mock/v1/interfaces/tapd");
  }

  @Test
  void aDisconnectedPageMarksItsGraphStaleAndSaysSoInASentence() throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> b.findElement(By.id("live")).getText().equals("live"));
    waiting(Duration.ofSeconds(30)).until(b -> !b.findElements(By.cssSelector(".node")).isEmpty());
    assertThat(browser.findElement(By.id("graph-pane")).getAttribute("class"))
        .doesNotContain("stale");

    agent.close();
    waiting(Duration.ofSeconds(20))
        .until(b -> b.findElement(By.id("graph-pane")).getAttribute("class").contains("stale"));
    assertThat(browser.findElement(By.id("stale")).getText())
        .containsPattern("as of \\d\\d:\\d\\d:\\d\\d");
    assertThat(
            ((JavascriptExecutor) browser)
                .executeScript("return getComputedStyle(document.getElementById('graph')).filter"))
        .asString()
        .contains("grayscale");
    assertThat(browser.findElement(By.id("live")).getText()).contains("disconnected");

    // what a value's panel says when the agent does not answer: a sentence, not the browser's
    node(TAP1).click();
    waiting(Duration.ofSeconds(20))
        .until(b -> b.findElement(By.id("d-explain")).getText().contains("does not answer"));
    assertThat(browser.findElement(By.tagName("body")).getText()).doesNotContain("Failed to fetch");
    screenshot("web-page-stale.png");
  }

  @Test
  void theLegendIsWhollyInsideTheWindow() throws Exception {
    // narrow: the header's filters take several lines
    browser.manage().window().setSize(new org.openqa.selenium.Dimension(700, 600));
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30)).until(b -> !b.findElements(By.cssSelector(".node")).isEmpty());
    List<WebElement> rows = browser.findElements(By.cssSelector("#legend li"));
    assertThat(rows).hasSize(10);
    Number height =
        (Number) ((JavascriptExecutor) browser).executeScript("return window.innerHeight");
    Map<String, Number> pane = box(browser.findElement(By.id("graph-pane")));
    for (WebElement row : rows) {
      Map<String, Number> b = box(row);
      assertThat(b.get("y").doubleValue() + b.get("height").doubleValue())
          .as("bottom of legend row %s", row.getText())
          .isLessThanOrEqualTo(height.doubleValue())
          .isLessThanOrEqualTo(pane.get("y").doubleValue() + pane.get("height").doubleValue());
    }
  }

  /** The keys of the values drawn, once the page has drawn again after a filter change. */
  @SuppressWarnings("unchecked")
  List<String> drawnKeys() {
    return (List<String>)
        ((JavascriptExecutor) browser)
            .executeScript(
                "return [...document.querySelectorAll('.node')].map(n => n.dataset.key)");
  }

  /** Waits until the values drawn pass {@code test} (the assertion after it says what is drawn). */
  void awaitDrawn(Predicate<List<String>> test) {
    try {
      waiting(Duration.ofSeconds(10)).until(b -> test.test(drawnKeys()));
    } catch (TimeoutException e) {
      // the assertion that follows names what is drawn
    }
  }

  /** {x, y, width, height} of an element on the page. */
  @SuppressWarnings("unchecked")
  Map<String, Number> box(WebElement e) {
    return (Map<String, Number>)
        ((JavascriptExecutor) browser)
            .executeScript(
                "const r = arguments[0].getBoundingClientRect();"
                    + " return {x: r.x, y: r.y, width: r.width, height: r.height};",
                e);
  }

  static boolean inside(Map<String, Number> inner, Map<String, Number> outer) {
    double ix = inner.get("x").doubleValue();
    double iy = inner.get("y").doubleValue();
    double ox = outer.get("x").doubleValue();
    double oy = outer.get("y").doubleValue();
    return ix >= ox
        && iy >= oy
        && ix + inner.get("width").doubleValue() <= ox + outer.get("width").doubleValue()
        && iy + inner.get("height").doubleValue() <= oy + outer.get("height").doubleValue();
  }

  @Test
  void layersLabelsColoursFiltersAndNeighbourhood() throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> !b.findElements(By.cssSelector(".node[data-key='" + FIB20 + "']")).isEmpty());

    // layers along dependencies: what a value depends on is drawn above it
    WebElement binding = node(BD1_TAP2);
    WebElement missing = node(TAP2);
    assertThat(missing.getAttribute("data-state")).isEqualTo("MISSING");
    assertThat(box(node(FIB20)).get("y").doubleValue())
        .isGreaterThan(box(binding).get("y").doubleValue());
    assertThat(box(binding).get("y").doubleValue())
        .isGreaterThan(box(missing).get("y").doubleValue());

    // a derived value is drawn with its base, inside one box
    assertThat(binding.getAttribute("class")).contains("derived");
    List<WebElement> clusters = browser.findElements(By.cssSelector(".cluster rect"));
    assertThat(clusters)
        .anySatisfy(
            c -> {
              assertThat(inside(box(node(BD1)), box(c))).isTrue();
              assertThat(inside(box(binding), box(c))).isTrue();
            });

    // edges carry the dependency's label; an unmet one is marked
    WebElement edge =
        browser.findElement(
            By.cssSelector(".edge[data-from='" + FIB20 + "'][data-to='" + BD1_TAP2 + "']"));
    assertThat(edge.findElement(By.tagName("text")).getText()).isEqualTo("bridged-interface");
    assertThat(edge.getAttribute("class")).contains("unsatisfied");
    assertThat(
            browser
                .findElement(
                    By.cssSelector(".edge[data-from='" + BD1_TAP2 + "'][data-to='" + TAP2 + "']"))
                .findElement(By.tagName("text"))
                .getText())
        .isEqualTo("interface-exists");

    // colours as in the legend, readable: the node's fill is the legend's swatch of its state,
    // and every state's colour gives the text a contrast of at least 4.5:1 (WCAG AA)
    JavascriptExecutor js = (JavascriptExecutor) browser;
    Object legendPending =
        js.executeScript(
            "const li = [...document.querySelectorAll('#legend li')]"
                + ".find(l => l.textContent === 'PENDING');"
                + " return getComputedStyle(li, '::before').backgroundColor;");
    Object fibFill =
        js.executeScript(
            "return getComputedStyle(arguments[0].querySelector('rect')).fill;", node(FIB20));
    Object configuredFill =
        js.executeScript(
            "return getComputedStyle(arguments[0].querySelector('rect')).fill;", node(TAP1));
    assertThat(fibFill).isEqualTo(legendPending);
    assertThat(configuredFill).isNotEqualTo(fibFill);
    @SuppressWarnings("unchecked")
    Map<String, Number> contrast =
        (Map<String, Number>)
            js.executeScript(
                "const lum = c => { const v = c.match(/[\\d.]+/g).slice(0, 3).map(x => {"
                    + " x = x / 255; return x <= 0.03928 ? x / 12.92"
                    + " : Math.pow((x + 0.055) / 1.055, 2.4); });"
                    + " return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };"
                    + " const ratio = (a, b) => { const x = lum(a), y = lum(b);"
                    + " return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };"
                    + " const out = {};"
                    + " document.querySelectorAll('.node').forEach(n => {"
                    + " out[n.dataset.key] = ratio(getComputedStyle(n.querySelector('rect')).fill,"
                    + " getComputedStyle(n.querySelector('text')).fill); });"
                    + " document.querySelectorAll('#legend li').forEach(l => {"
                    + " out['legend ' + l.textContent] ="
                    + " ratio(getComputedStyle(l, '::before').backgroundColor,"
                    + " getComputedStyle(document.querySelector('.node text')).fill); });"
                    + " return out;");
    assertThat(contrast).hasSizeGreaterThan(10);
    contrast.forEach(
        (what, ratio) -> assertThat(ratio.doubleValue()).as(what).isGreaterThanOrEqualTo(4.5));

    // filter by descriptor: the FIB entries only
    new Select(browser.findElement(By.id("f-descriptor"))).selectByValue("mock-l2-fib");
    awaitDrawn(keys -> keys.size() == 3);
    assertThat(drawnKeys())
        .containsExactlyInAnyOrder(
            FIB20,
            "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10",
            "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:30");

    // and by state: the PENDING values
    new Select(browser.findElement(By.id("f-descriptor"))).selectByValue("");
    new Select(browser.findElement(By.id("f-state"))).selectByValue("PENDING");
    awaitDrawn(keys -> keys.size() == 2);
    assertThat(drawnKeys()).containsExactlyInAnyOrder(FIB20, BD1_TAP2);

    // the neighbourhood of the selected value: what it depends on, its base and derived values
    new Select(browser.findElement(By.id("f-state"))).selectByValue("");
    awaitDrawn(keys -> keys.contains(TAP1));
    node(FIB20).click();
    browser.findElement(By.id("f-neighbourhood")).click();
    awaitDrawn(keys -> !keys.contains(TAP1));
    assertThat(drawnKeys())
        .contains(FIB20, BD1_TAP2, BD1)
        .doesNotContain(TAP1, "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10");

    // folding by key prefix, then by descriptor
    browser.findElement(By.id("f-neighbourhood")).click();
    new Select(browser.findElement(By.id("f-fold"))).selectByValue("prefix");
    awaitDrawn(keys -> keys.stream().allMatch(k -> k.startsWith("prefix:")));
    assertThat(drawnKeys()).contains("prefix:config/mock/v1/fib/bd1/mac/");
    WebElement fibs = node("prefix:config/mock/v1/fib/bd1/mac/");
    assertThat(fibs.getText()).contains("3 values (folded)").contains("PENDING 1");
    new Select(browser.findElement(By.id("f-fold"))).selectByValue("descriptor");
    awaitDrawn(keys -> keys.stream().allMatch(k -> k.startsWith("descriptor:")));
    assertThat(drawnKeys()).contains("descriptor:mock-l2-fib", "descriptor:mock-interface");
    assertThat(node("descriptor:mock-l2-fib").getAttribute("data-state")).isEqualTo("PENDING");

    // the transaction list shows each transaction's operations, with their flags
    assertThat(browser.findElement(By.id("txns")).getText())
        .contains("CREATE " + TAP1 + " → CONFIGURED")
        .containsPattern("CREATE " + BD1_TAP2 + " → PENDING \\[DERIVED, NOOP\\]");
  }

  /** Writes what the browser shows to {@code target/<name>}. */
  void screenshot(String name) throws Exception {
    Path shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
    Path target = Path.of("target", name);
    Files.copy(shot, target, StandardCopyOption.REPLACE_EXISTING);
    LOG.info("screenshot of the page: {}", target.toAbsolutePath());
  }

  /**
   * Replaces the agent by one with etcd (and the fleet URL, if any) and points {@link #url} at it.
   */
  void restartWithEtcd(EtcdFixture etcd, String fleetUrl) throws Exception {
    agent.close();
    agent =
        Agent.start(
            AgentConfig.builder()
                .label("web")
                .restAddress("127.0.0.1:0")
                .etcdEndpoints(List.of(etcd.endpoint()))
                .fleetUrl(fleetUrl)
                .printTxnSummary(false)
                .build());
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    url = "http://127.0.0.1:" + port;
  }

  @Test
  void withEtcdTheHeaderLinksToTheFleetViewOrTellsHowToServeOne() throws Exception {
    // without etcd: no word of a fleet (the page has read the label before it draws)
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> !b.findElements(By.cssSelector("#txns > li")).isEmpty());
    assertThat(browser.findElement(By.id("fleet")).isDisplayed()).isFalse();
    try (EtcdFixture etcd = EtcdFixture.startNew()) {
      // the fleet URL set: a link to it
      restartWithEtcd(etcd, "http://fleet.example:9192/");
      browser.get(url + "/");
      WebElement link =
          waiting(Duration.ofSeconds(30)).until(b -> b.findElement(By.cssSelector("#fleet a")));
      assertThat(link.getAttribute("href")).isEqualTo("http://fleet.example:9192/");
      assertThat(link.getText()).isEqualTo("fleet view");
      assertThat(browser.findElement(By.id("fleet")).isDisplayed()).isTrue();
      screenshot("fleet-link");
      // none set: how to serve one
      restartWithEtcd(etcd, null);
      browser.get(url + "/");
      waiting(Duration.ofSeconds(30)).until(b -> b.findElement(By.id("fleet")).isDisplayed());
      assertThat(browser.findElement(By.id("fleet")).getText())
          .contains("kvsctl fleet --serve PORT", "fleet-url");
      assertThat(browser.findElements(By.cssSelector("#fleet a"))).isEmpty();
      agent.close();
      agent = null;
    }
  }

  @Test
  void northboundProblemsShowInABannerUntilFixed() throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> !b.findElements(By.cssSelector("#txns > li")).isEmpty());
    assertThat(browser.findElement(By.id("problems")).isDisplayed()).isFalse();
    Path bad = dir.resolve("config").resolve("bad.yaml");
    Files.writeString(bad, "config/mock/v1/interfaces/tap7:\n  name: [tap7\n");
    waiting(Duration.ofSeconds(20)).until(b -> b.findElement(By.id("problems")).isDisplayed());
    String banner = browser.findElement(By.id("problems")).getText();
    assertThat(banner).contains("1 northbound problem", "file bad.yaml:", "malformed");
    assertThat(browser.findElements(By.cssSelector("#problems-list > li"))).hasSize(1);
    screenshot("problems-banner");
    Files.delete(bad);
    waiting(Duration.ofSeconds(20)).until(b -> !b.findElement(By.id("problems")).isDisplayed());
  }

  @Test
  void historyShowsTheGraphAsOfATransaction() throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> !b.findElements(By.cssSelector("#txns > li")).isEmpty());
    assertThat(
            put(
                """
        mockConfig:
          Interface_list:
          - name: tap2
            type: TAP
        """))
        .isEqualTo(200);
    waiting(Duration.ofSeconds(20))
        .until(b -> "CONFIGURED".equals(node(FIB20).getAttribute("data-state")));
    // the oldest transaction with FIB20 PENDING: before tap2 came
    List<WebElement> txns = browser.findElements(By.cssSelector("#txns > li"));
    WebElement oldest = txns.get(txns.size() - 1);
    oldest.findElement(By.tagName("button")).click();
    waiting(Duration.ofSeconds(20))
        .until(b -> "PENDING".equals(node(FIB20).getAttribute("data-state")));
    assertThat(browser.findElement(By.id("asof")).isDisplayed()).isTrue();
    browser.findElement(By.id("asof-back")).click();
    waiting(Duration.ofSeconds(20))
        .until(b -> "CONFIGURED".equals(node(FIB20).getAttribute("data-state")));
  }

  @Test
  void aFailedOperationIsShownInTheHistoryAndOnItsValue() throws Exception {
    browser.get(url + "/");
    waiting(Duration.ofSeconds(30))
        .until(b -> !b.findElements(By.cssSelector("#txns > li")).isEmpty());
    MockAgentPlugin mock =
        agent.plugins().stream()
            .filter(MockAgentPlugin.class::isInstance)
            .map(MockAgentPlugin.class::cast)
            .findFirst()
            .orElseThrow();
    mock.plugins().interfaces().southbound().failNextTapCreation("no room for taps");
    put(
        """
        mockConfig:
          Interface_list:
          - name: tap9
            type: TAP
        """);
    String tap9 = "config/mock/v1/interfaces/tap9";
    waiting(Duration.ofSeconds(20))
        .until(b -> !b.findElements(By.cssSelector("#txns > li.has-errors")).isEmpty());
    WebElement failed = browser.findElement(By.cssSelector("#txns > li.has-errors"));
    assertThat(failed.findElement(By.className("txn-head")).getText()).endsWith(" — 1 error");
    assertThat(failed.findElement(By.cssSelector(".ops .err")).getText())
        .contains("CREATE " + tap9)
        .containsPattern("→ (FAILED|RETRYING) \\(.*no room for taps.*\\)");
  }

  @Test
  void tenThousandValuesRenderFoldedWithinABound() throws Exception {
    StringBuilder yaml = new StringBuilder("mockConfig:\n  Interface_list:\n");
    for (int i = 0; i < 10_000; i++) {
      yaml.append("  - name: if").append(i).append("\n    type: LOOPBACK\n");
    }
    assertThat(put(yaml.toString())).isEqualTo(200);
    long start = System.nanoTime();
    browser.get(url + "/");
    waiting(BIG_GRAPH_BOUND).until(b -> !b.findElements(By.cssSelector(".node.group")).isEmpty());
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    Object drawMs =
        ((JavascriptExecutor) browser).executeScript("return window.kvsUi.lastRenderMs");
    LOG.info(
        "10,000 values: page loaded and drawn in {} ms (layout and drawing {} ms)",
        took.toMillis(),
        drawMs);
    assertThat(took).isLessThan(BIG_GRAPH_BOUND);
    assertThat(browser.findElement(By.id("summary")).getText()).contains("10010 values");

    // open the interfaces' group: it splits into smaller groups, never 10,000 nodes at once
    WebElement group =
        browser.findElement(By.cssSelector(".node.group[data-key='descriptor:mock-interface']"));
    group.click();
    waiting(Duration.ofSeconds(20))
        .until(
            b ->
                b.findElements(By.cssSelector(".node.group[data-key='descriptor:mock-interface']"))
                    .isEmpty());
    assertThat(browser.findElements(By.cssSelector(".node")).size()).isLessThan(300);
    // the groups it splits into are labelled by what tells their keys apart, not by the part
    // they share (config/mock/v1/interfaces/i…)
    String ifs = ".node.group[data-key='prefix:config/mock/v1/interfaces/i']";
    assertThat(browser.findElement(By.cssSelector(ifs)).findElement(By.tagName("text")).getText())
        .isEqualTo("interfaces/if0 … if9999");
    browser.findElement(By.cssSelector(ifs)).click();
    String if1 = ".node.group[data-key='prefix:config/mock/v1/interfaces/if1']";
    waiting(Duration.ofSeconds(20)).until(b -> !b.findElements(By.cssSelector(if1)).isEmpty());
    assertThat(browser.findElement(By.cssSelector(if1)).findElement(By.tagName("text")).getText())
        .isEqualTo("interfaces/if1 … if1999");

    // search: one value, drawn alone
    browser.findElement(By.id("f-text")).sendKeys("interfaces/if9999");
    waiting(Duration.ofSeconds(20)).until(b -> b.findElements(By.cssSelector(".node")).size() == 1);
    assertThat(node("config/mock/v1/interfaces/if9999").getText()).contains("CONFIGURED");
  }
}
