package io.hashexpr

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription, GenericInternalRow, LeafExpression, Nondeterministic}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodeGenerator, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StructType}

/**
 * The position of a row in the data being computed: the streaming micro-batch, the partition and the row's
 * index within the partition.
 *
 * Like `monotonically_increasing_id()` it numbers rows per partition, but it is allowed in streaming queries:
 * there `monotonically_increasing_id()` is refused because every micro-batch numbers its rows from 0 again,
 * which the micro-batch id here tells apart. The micro-batch id is the one the streaming engine puts into
 * the local properties of the micro-batch's tasks; a replayed micro-batch has the same id.
 *
 * Since this expression is stateful, it cannot be a case object.
 */
// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_() - Returns the position of the row: a struct of `batch_id` (the streaming micro-batch id, NULL outside a micro-batch), `partition` (the index of the task's partition) and `index` (the row's index within that partition, from 0). Positions are unique within a micro-batch or a batch query, and with `batch_id` across the micro-batches of a streaming query. Like monotonically_increasing_id(), it reflects the physical partitioning; unlike it, it can be used in streaming queries.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_().batch_id IS NULL, _FUNC_().partition, _FUNC_().index;
       true	0	0
      > SELECT max(p.index) FROM (SELECT _FUNC_() AS p FROM range(0, 5, 1, 1));
       4
  """,
  since = "0.2.0",
  group = "misc_funcs")
// scalastyle:on line.size.limit
case class RowPosition() extends LeafExpression with Nondeterministic {

  /** The micro-batch id, NULL outside one; read once per partition. */
  @transient private[this] var batchId: java.lang.Long = _

  @transient private[this] var partition: Int = _

  /** Row index within the partition; being transient, it restarts at 0 on every partition. */
  @transient private[this] var count: Long = _

  override def stateful: Boolean = true

  override protected def initializeInternal(partitionIndex: Int): Unit = {
    batchId = RowPosition.microBatchId()
    partition = partitionIndex
    count = 0L
  }

  override def nullable: Boolean = false

  override def dataType: DataType = RowPosition.ResultType

  override protected def evalInternal(input: InternalRow): Any = {
    val position = new GenericInternalRow(Array[Any](batchId, partition, count))
    count += 1
    position
  }

  override def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val batchIdTerm = ctx.addMutableState("java.lang.Long", "batchId")
    val partitionTerm = ctx.addMutableState(CodeGenerator.JAVA_INT, "partition")
    val countTerm = ctx.addMutableState(CodeGenerator.JAVA_LONG, "count")
    ctx.addPartitionInitializationStatement(
      s"$batchIdTerm = ${RowPosition.getClass.getName.stripSuffix("$")}.microBatchId();")
    ctx.addPartitionInitializationStatement(s"$partitionTerm = partitionIndex;")
    ctx.addPartitionInitializationStatement(s"$countTerm = 0L;")
    val row = classOf[GenericInternalRow].getName
    ev.copy(code = code"""
      final InternalRow ${ev.value} = new $row(new Object[] {
        $batchIdTerm, Integer.valueOf($partitionTerm), Long.valueOf($countTerm)});
      $countTerm++;""", isNull = FalseLiteral)
  }

  override def prettyName: String = RowPosition.Name

  override def sql: String = s"$prettyName()"

  // A fresh instance, not `this` as for other leaves: each copy of the plan must count its own rows.
  override def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RowPosition = RowPosition()
}

object RowPosition {
  val Name = "row_position"

  val ResultType: StructType = new StructType()
    .add("batch_id", LongType, nullable = true)
    .add("partition", IntegerType, nullable = false)
    .add("index", LongType, nullable = false)

  /**
   * The key of the micro-batch id in a streaming query's task properties (`MicroBatchExecution.BATCH_ID_KEY`).
   * Spelled out: the class that holds it moved between Spark minors.
   */
  private val BatchIdKey = "streaming.sql.batchId"

  /** The current task's micro-batch id, or null outside a task or a micro-batch. */
  def microBatchId(): java.lang.Long = {
    val id = Option(TaskContext.get()).flatMap(t => Option(t.getLocalProperty(BatchIdKey)))
    id.map(s => java.lang.Long.valueOf(s)).orNull
  }
}
