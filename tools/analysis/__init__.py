"""`analyze`: SQL over approved tabular records in a sandbox; what it computes is analysis, never a
source fact."""
