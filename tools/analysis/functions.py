"""The functions an `analyze` query may call: pure scalars, aggregates and window functions of
values, by the name DuckDB's parser gives them (`tools/analysis/sqlcheck.py`). Deny by default: a
name not here is refused by the guard, whatever its quoting or case, so no function that reads a
file (`read_text`, `read_csv`, `glob`, …), the engine's state (`current_setting`, `getvariable`,
`duckdb_*`), a clock or a random source is callable, nor one that calls another function by a
name given as text (`list_aggregate(l, 'sum')`). Every name is checked against the installed
DuckDB by `tests/tools/analysis/test_query_check.py`."""

from __future__ import annotations


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


OPERATORS = _names(
    """
    + - * / // % ** ^ & | << >> ~ @ || ^@ <=> ->> <-> && @> <@
    ~~ !~~ ~~* !~~* ~~~
    """
)
"""Operators the parser writes as function calls (`~~` is LIKE, `~~*` ILIKE, `~~~` GLOB: a
pattern on a string, not on files)."""

SCALARS = _names(
    """
    abs acos acosh add asin asinh atan atan2 atanh cbrt ceil ceiling cos cosh cot degrees divide
    even exp factorial fdiv floor fmod gamma gcd greatest greatest_common_divisor isfinite isinf
    isnan lcm least least_common_multiple lgamma ln log log10 log2 mod multiply nextafter pi pow
    power radians round round_even roundbankers sign signbit sin sinh sqrt subtract tan tanh trunc
    xor bit_count bit_length bit_position get_bit set_bit
    ascii bar base64 chr concat concat_ws contains damerau_levenshtein editdist3 ends_with
    format format_bytes formatreadabledecimalsize formatreadablesize from_base64 hamming hash hex
    ilike_escape instr jaccard jaro_similarity jaro_winkler_similarity lcase left left_grapheme
    len length length_grapheme levenshtein like_escape lower lpad ltrim md5 md5_number
    mismatches nfc_normalize not_ilike_escape not_like_escape octet_length ord overlay position
    prefix printf regexp_escape regexp_extract regexp_extract_all regexp_full_match
    regexp_matches regexp_replace regexp_split_to_array repeat replace reverse right
    right_grapheme rpad rtrim sha1 sha256 split split_part starts_with str_split str_split_regex
    string_split string_split_regex string_to_array strip_accents strlen strpos substr substring
    substring_grapheme suffix to_base to_base64 to_hex translate trim ucase unbin unhex unicode
    upper url_decode url_encode char_length character_length bin
    century date_diff date_part date_sub date_trunc datediff datepart datesub datetrunc date_add
    day dayname dayofmonth dayofweek dayofyear days_in_month decade epoch epoch_ms epoch_ns
    epoch_us era hour isodow isoyear julian last_day make_date make_time make_timestamp
    make_timestamp_ms make_timestamp_ns microsecond millennium millisecond minute month
    monthname nanosecond normalized_interval quarter second strftime strptime time_bucket
    to_centuries to_days to_decades to_hours to_microseconds to_millennia to_milliseconds
    to_minutes to_months to_quarters to_seconds to_timestamp to_weeks to_years try_strptime week
    weekday weekofyear year yearweek
    array_append array_cat array_concat array_contains array_cosine_distance
    array_cosine_similarity array_cross_product array_distance array_distinct array_dot_product
    array_extract array_filter array_grade_up array_has array_has_all array_has_any
    array_indexof array_inner_product array_intersect array_length array_negative_dot_product
    array_negative_inner_product array_pop_back array_pop_front array_position array_prepend
    array_push_back array_push_front array_reduce array_resize array_reverse array_reverse_sort
    array_select array_slice array_sort array_to_string array_transform array_unique
    array_value array_where array_zip apply cardinality element_at filter flatten
    generate_series grade_up list_any_value list_append list_apply list_approx_count_distinct
    list_avg list_bit_and list_bit_or list_bit_xor list_bool_and list_bool_or list_cat
    list_concat list_contains list_cosine_distance list_cosine_similarity list_count
    list_distance list_distinct list_dot_product list_element list_entropy list_extract
    list_filter list_first list_grade_up list_has list_has_all list_has_any list_histogram
    list_indexof list_inner_product list_intersect list_kurtosis list_kurtosis_pop list_last
    list_mad list_max list_median list_min list_mode list_negative_dot_product
    list_negative_inner_product list_pack list_position list_prepend list_product list_reduce
    list_resize list_reverse list_reverse_sort list_select list_sem list_skewness list_slice
    list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum list_transform
    list_unique list_value list_var_pop list_var_samp list_where list_zip range reduce
    map map_concat map_contains map_contains_entry map_contains_value map_entries map_extract
    map_extract_value map_from_entries map_keys map_values row struct_concat struct_contains
    struct_extract struct_extract_at struct_has struct_indexof struct_insert struct_keys
    struct_pack struct_position struct_update struct_values
    json json_array json_array_length json_contains json_exists json_extract json_extract_path
    json_extract_path_text json_extract_string json_keys json_merge_patch json_object
    json_pretty json_quote json_structure json_transform json_type json_valid json_value
    to_json array_to_json row_to_json from_json
    if nullif typeof equi_width_bins
    """
)

AGGREGATES = _names(
    """
    any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
    arg_min arg_min_null argmax argmin array_agg avg bit_and bit_or bit_xor bool_and bool_or
    corr count count_if count_star countif covar_pop covar_samp entropy favg first fsum
    geomean geometric_mean group_concat histogram histogram_exact json_group_array
    json_group_object kahan_sum kurtosis kurtosis_pop last list listagg mad max max_by mean
    median min min_by mode product quantile quantile_cont quantile_disc regr_avgx regr_avgy
    regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy sem skewness stddev
    stddev_pop stddev_samp string_agg sum sumkahan var_pop var_samp variance wavg weighted_avg
    """
)

BINDER_FUNCTIONS = frozenset({"unnest"})
"""Names the binder turns into an operator of the plan (`unnest` in a select list) rather than
look up in the catalog: DuckDB lists them as table functions only."""

WINDOWS = _names(
    """
    cume_dist dense_rank fill first_value lag last_value lead nth_value ntile percent_rank rank
    row_number
    """
)

ALLOWED_FUNCTIONS = OPERATORS | SCALARS | BINDER_FUNCTIONS | AGGREGATES | WINDOWS
"""Every name a query may call, lower-case (DuckDB resolves a function's name whatever its
case)."""
