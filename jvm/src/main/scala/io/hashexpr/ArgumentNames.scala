package io.hashexpr

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, ExprId, Expression, GetArrayStructFields,
  GetStructField, NamedLambdaVariable, PrettyAttribute}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.toPrettySQL

/**
 * The name an argument goes by in a by-name record and in a fingerprint's schema digest (docs/FORMAT.md,
 * section 6.1): what the user sees as the column's name, never a table name, alias or the case a name was typed in.
 */
private[hashexpr] object ArgumentNames {

  /**
   * @param columns the names of the input's columns by expression id, as its schema spells them; a column
   *                missing from it goes by the name it was resolved with
   */
  def of(e: Expression, columns: Map[ExprId, String] = Map.empty): String = e match {
    case a: Attribute => columns.getOrElse(a.exprId, a.name)
    case v: NamedLambdaVariable => v.name
    case Alias(_, name) => name
    case f: GetStructField => f.childSchema(f.ordinal).name
    case f: GetArrayStructFields => f.field.name
    // Spark's name for an unaliased output column, without qualifiers: `upper(s)`, `(a + 1)`.
    case other => toPrettySQL(inSchemaCase(other, columns))
  }

  private def inSchemaCase(e: Expression, columns: Map[ExprId, String]): Expression = e.transformUp {
    case a: Attribute => columns.get(a.exprId).map(a.withName).getOrElse(a)
    case f: GetStructField => f.copy(name = Some(f.childSchema(f.ordinal).name))
    // Spark prints a lambda variable as `namedlambdavariable()`; its name is what the user wrote.
    case v: NamedLambdaVariable => PrettyAttribute(v.name, v.dataType)
  }
}

/**
 * Names the arguments of `record_hash_by_name`, `record_hash_by_name_with`, `dataset_fingerprint`,
 * `dataset_fingerprint_with`, `dataset_fingerprint_state` and `dataset_fingerprint_state_with` after the columns of
 * the operator's input. A function is built while its arguments resolve, and a reference typed `ID` resolves to the
 * column `id` under the name `ID`; this rule, run once the operator's inputs are resolved, gives it the schema's
 * name.
 */
object ArgumentNamesRule extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case p if p.childrenResolved && p.expressions.exists(_.exists(takesNames)) =>
      val columns = p.children.flatMap(_.output).map(a => a.exprId -> a.name).toMap
      p.transformExpressions {
        case r: RecordHashByName => r.copy(names = r.children.map(ArgumentNames.of(_, columns)))
        case r: RecordHashByNameWith => r.copy(names = r.children.drop(1).map(ArgumentNames.of(_, columns)))
        case f: DatasetFingerprint => f.copy(names = f.children.map(ArgumentNames.of(_, columns)))
        case f: DatasetFingerprintWith => f.copy(names = f.children.drop(1).map(ArgumentNames.of(_, columns)))
        case f: DatasetFingerprintState => f.copy(names = f.children.map(ArgumentNames.of(_, columns)))
        case f: DatasetFingerprintStateWith => f.copy(names = f.children.drop(1).map(ArgumentNames.of(_, columns)))
      }
  }

  private def takesNames(e: Expression): Boolean = e match {
    case _: RecordHashByName | _: RecordHashByNameWith | _: DatasetFingerprint | _: DatasetFingerprintWith |
        _: DatasetFingerprintState | _: DatasetFingerprintStateWith => true
    case _ => false
  }
}
