package io.kvscheduler.internal;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The engine's packages and the directions of their arrows, checked on the compiled classes.
 *
 * <p>From the bottom up: {@code internal.collect} (collections that know nothing of the engine),
 * then the engine's sub-packages, then {@code internal.engine} itself (the walk and the transaction
 * pipeline), which may use all of them. A sub-package never uses the package above it, and no two
 * packages use each other, directly or round a ring.
 *
 * <p>The sub-packages, bottom up: {@code graph} (nodes, the graph, its journal) and nothing else of
 * the engine; {@code record} (operation and transaction records) on the graph; {@code config} (the
 * scheduler's settings) on the records; {@code publish} (the read side) on graph and records;
 * {@code history} (records kept, revisions) on all of those; {@code calls} (descriptor handles, the
 * call chain, parallel calls) on graph and records; {@code refresh} (reading the southbound) on
 * calls, history, graph and records; {@code loop} (the engine thread, its queue and timers) on
 * calls, settings and the graph.
 */
class PackageDirectionsTest {

  private static final String API = "io.kvscheduler.api..";
  private static final String COLLECT = "io.kvscheduler.internal.collect..";
  private static final String UTIL = "io.kvscheduler.internal.util..";
  private static final String ENGINE_TOP = "io.kvscheduler.internal.engine";
  private static final String ENGINE = "io.kvscheduler.internal.engine.";

  private static JavaClasses engine;

  @BeforeAll
  static void importClasses() {
    engine =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.kvscheduler");
  }

  @Test
  void collectionsKnowNothingOfTheEngine() {
    classes()
        .that()
        .resideInAPackage(COLLECT)
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(COLLECT, "java..", "org.pcollections..")
        .check(engine);
  }

  @Test
  void subPackagesDoNotUseTheWalkOrThePipeline() {
    classes()
        .that()
        .resideInAPackage("io.kvscheduler.internal.engine.*..")
        .should()
        .onlyDependOnClassesThat()
        .resideOutsideOfPackage(ENGINE_TOP)
        .allowEmptyShould(true)
        .check(engine);
  }

  /**
   * A node holds the data of other subsystems (the revision chain, the cached descriptor handle and
   * memo) only as types it declares itself, so it can leave for a package below them.
   */
  @Test
  void aNodeKnowsNothingOfHistoryPublishingOrCalls() {
    classes()
        .that()
        .haveNameMatching("io\\.kvscheduler\\.internal\\.engine\\.graph\\.Node(\\$.*)?")
        .should()
        .onlyDependOnClassesThat(
            resideInAnyPackage("java..", API)
                .or(
                    nameMatching(
                        "io\\.kvscheduler\\.internal\\.engine\\.graph\\.(Node(\\$.*)?|DependencyIndex)")))
        .check(engine);
  }

  /** Each arrow between the engine's packages runs down the list in the class comment. */
  @Test
  void engineSubPackagesOnlyUseThoseBelowThem() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("walk and pipeline")
        .definedBy(ENGINE_TOP)
        .layer("loop")
        .definedBy(ENGINE + "loop..")
        .layer("refresh")
        .definedBy(ENGINE + "refresh..")
        .layer("history")
        .definedBy(ENGINE + "history..")
        .layer("calls")
        .definedBy(ENGINE + "calls..")
        .layer("publish")
        .definedBy(ENGINE + "publish..")
        .layer("config")
        .definedBy(ENGINE + "config..")
        .layer("record")
        .definedBy(ENGINE + "record..")
        .layer("graph")
        .definedBy(ENGINE + "graph..")
        .whereLayer("walk and pipeline")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("loop")
        .mayOnlyBeAccessedByLayers("walk and pipeline")
        .whereLayer("refresh")
        .mayOnlyBeAccessedByLayers("walk and pipeline")
        .whereLayer("history")
        .mayOnlyBeAccessedByLayers("walk and pipeline", "refresh")
        .whereLayer("calls")
        .mayOnlyBeAccessedByLayers("walk and pipeline", "loop", "refresh")
        .whereLayer("publish")
        .mayOnlyBeAccessedByLayers("walk and pipeline", "history")
        .whereLayer("config")
        .mayOnlyBeAccessedByLayers("walk and pipeline", "loop", "history")
        .whereLayer("record")
        .mayOnlyBeAccessedByLayers(
            "walk and pipeline", "refresh", "history", "calls", "publish", "config")
        .whereLayer("graph")
        .mayOnlyBeAccessedByLayers(
            "walk and pipeline",
            "loop",
            "refresh",
            "history",
            "calls",
            "publish",
            "config",
            "record")
        .check(engine);
  }

  @Test
  void internalPackagesAreFreeOfCycles() {
    slices().matching("io.kvscheduler.internal.(*)..").should().beFreeOfCycles().check(engine);
  }

  @Test
  void engineSubPackagesAreFreeOfCycles() {
    slices()
        .matching("io.kvscheduler.internal.engine.(*)..")
        .should()
        .beFreeOfCycles()
        .allowEmptyShould(true)
        .check(engine);
  }

  @Test
  void apiAndUtilitiesDoNotReachIntoTheEngine() {
    classes()
        .that()
        .resideInAnyPackage(UTIL, "io.kvscheduler.internal.idxmap..")
        .should()
        .onlyDependOnClassesThat()
        .resideOutsideOfPackages("io.kvscheduler.internal.engine..", COLLECT)
        .check(engine);
  }
}
