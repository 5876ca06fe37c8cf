//! The columns of one batch, checked and typed, with their names as the schema spells them.

use arrow_array::{Array, ArrayRef};

use crate::column::Node;
use crate::error::Error;
use crate::spark_type::SparkType;

/// The Spark types of named Arrow columns, or an error naming the first column Spark has no type for.
pub fn spark_types(fields: &[(String, arrow_schema::DataType)]) -> Result<Vec<SparkType>, Error> {
    fields
        .iter()
        .map(|(name, t)| SparkType::of_arrow(t).map_err(|e| e.in_column(name)))
        .collect()
}

/// Named Arrow columns of equal length, as typed nodes.
pub struct Columns {
    pub nodes: Vec<Node>,
    pub len: usize,
}

impl Columns {
    /// The nodes of `arrays`, checked; errors name the column.
    pub fn new(names: &[String], arrays: &[ArrayRef]) -> Result<Self, Error> {
        assert_eq!(names.len(), arrays.len());
        let len = arrays.first().map_or(0, |a| a.len());
        let nodes = names
            .iter()
            .zip(arrays)
            .map(|(name, array)| {
                {
                    if array.len() != len {
                        return Err(Error::invalid(format!(
                            "has {} rows, the first column {len}",
                            array.len()
                        )));
                    }
                    Node::build(array)
                }
                .map_err(|e| e.in_column(name))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { nodes, len })
    }
}
