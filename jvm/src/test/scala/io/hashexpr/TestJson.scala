package io.hashexpr

import com.fasterxml.jackson.databind.JsonNode

/** Reading the vector files on every Scala version hashexpr is built with. */
object TestJson {
  def elements(node: JsonNode): Seq[JsonNode] = {
    val all = Seq.newBuilder[JsonNode]
    val it = node.elements()
    while (it.hasNext) all += it.next()
    all.result()
  }

  /** A vector of a type this Spark line lacks (collated strings before Spark 4.0) is absent here. */
  def onThisLine(vector: JsonNode): Boolean =
    LineFeatures.collations || !vector.toString.toLowerCase.contains("collate")
}
