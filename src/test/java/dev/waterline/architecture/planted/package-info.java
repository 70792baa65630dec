/**
 * Classes planted for {@code BoundaryRulesUnitTests}: each breaks one boundary rule on purpose, so
 * that the test proves the rule fires. Test sources only; nothing uses them.
 */
package dev.waterline.architecture.planted;
