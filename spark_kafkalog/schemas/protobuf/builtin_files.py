"""The ``.proto`` files Confluent's registry and clients treat as built in besides protobuf's own well-known
types: Google's common types (``google/type/*.proto``) and Confluent's (``confluent/meta.proto``,
``confluent/type/*.proto``). confluent-kafka's serializers register schemas importing them without
references, so the registry must know them.

The texts are these public files' definitions, printed by ``proto_printer`` from their published
descriptors (a test checks they parse back to those descriptors). Data only.
"""

from __future__ import annotations

BUILTIN_FILES: dict[str, str] = {
    "google/type/calendar_period.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "CalendarPeriodProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/calendarperiod;calendarperiod";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "enum CalendarPeriod {\n"
        "  CALENDAR_PERIOD_UNSPECIFIED = 0;\n"
        "  DAY = 1;\n"
        "  WEEK = 2;\n"
        "  FORTNIGHT = 3;\n"
        "  MONTH = 4;\n"
        "  QUARTER = 5;\n"
        "  HALF = 6;\n"
        "  YEAR = 7;\n"
        "}\n"
    ),
    "google/type/color.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'import "google/protobuf/wrappers.proto";\n'
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "ColorProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/color;color";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message Color {\n"
        "  float red = 1;\n"
        "  float green = 2;\n"
        "  float blue = 3;\n"
        "  .google.protobuf.FloatValue alpha = 4;\n"
        "}\n"
    ),
    "google/type/date.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "DateProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/date;date";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message Date {\n"
        "  int32 year = 1;\n"
        "  int32 month = 2;\n"
        "  int32 day = 3;\n"
        "}\n"
    ),
    "google/type/datetime.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'import "google/protobuf/duration.proto";\n'
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "DateTimeProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/datetime;datetime";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message DateTime {\n"
        "  int32 year = 1;\n"
        "  int32 month = 2;\n"
        "  int32 day = 3;\n"
        "  int32 hours = 4;\n"
        "  int32 minutes = 5;\n"
        "  int32 seconds = 6;\n"
        "  int32 nanos = 7;\n"
        "  oneof time_offset {\n"
        "    .google.protobuf.Duration utc_offset = 8;\n"
        "    .google.type.TimeZone time_zone = 9;\n"
        "  }\n"
        "}\n"
        "\n"
        "message TimeZone {\n"
        "  string id = 1;\n"
        "  string version = 2;\n"
        "}\n"
    ),
    "google/type/dayofweek.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "DayOfWeekProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/dayofweek;dayofweek";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "enum DayOfWeek {\n"
        "  DAY_OF_WEEK_UNSPECIFIED = 0;\n"
        "  MONDAY = 1;\n"
        "  TUESDAY = 2;\n"
        "  WEDNESDAY = 3;\n"
        "  THURSDAY = 4;\n"
        "  FRIDAY = 5;\n"
        "  SATURDAY = 6;\n"
        "  SUNDAY = 7;\n"
        "}\n"
    ),
    "google/type/expr.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "ExprProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/expr;expr";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message Expr {\n"
        "  string expression = 1;\n"
        "  string title = 2;\n"
        "  string description = 3;\n"
        "  string location = 4;\n"
        "}\n"
    ),
    "google/type/fraction.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "FractionProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/fraction;fraction";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message Fraction {\n"
        "  int64 numerator = 1;\n"
        "  int64 denominator = 2;\n"
        "}\n"
    ),
    "google/type/latlng.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "LatLngProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/latlng;latlng";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message LatLng {\n"
        "  double latitude = 1;\n"
        "  double longitude = 2;\n"
        "}\n"
    ),
    "google/type/money.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "MoneyProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/money;money";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message Money {\n"
        "  string currency_code = 1;\n"
        "  int64 units = 2;\n"
        "  int32 nanos = 3;\n"
        "}\n"
    ),
    "google/type/month.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "MonthProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/month;month";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "enum Month {\n"
        "  MONTH_UNSPECIFIED = 0;\n"
        "  JANUARY = 1;\n"
        "  FEBRUARY = 2;\n"
        "  MARCH = 3;\n"
        "  APRIL = 4;\n"
        "  MAY = 5;\n"
        "  JUNE = 6;\n"
        "  JULY = 7;\n"
        "  AUGUST = 8;\n"
        "  SEPTEMBER = 9;\n"
        "  OCTOBER = 10;\n"
        "  NOVEMBER = 11;\n"
        "  DECEMBER = 12;\n"
        "}\n"
    ),
    "google/type/postal_address.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "PostalAddressProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/postaladdress;postaladdress";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message PostalAddress {\n"
        "  int32 revision = 1;\n"
        "  string region_code = 2;\n"
        "  string language_code = 3;\n"
        "  string postal_code = 4;\n"
        "  string sorting_code = 5;\n"
        "  string administrative_area = 6;\n"
        "  string locality = 7;\n"
        "  string sublocality = 8;\n"
        "  repeated string address_lines = 9;\n"
        "  repeated string recipients = 10;\n"
        "  string organization = 11;\n"
        "}\n"
    ),
    "google/type/quaternion.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "QuaternionProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/quaternion;quaternion";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message Quaternion {\n"
        "  double x = 1;\n"
        "  double y = 2;\n"
        "  double z = 3;\n"
        "  double w = 4;\n"
        "}\n"
    ),
    "google/type/timeofday.proto": (
        'syntax = "proto3";\n'
        "package google.type;\n"
        "\n"
        'option java_package = "com.google.type";\n'
        'option java_outer_classname = "TimeOfDayProto";\n'
        "option java_multiple_files = true;\n"
        'option go_package = "google.golang.org/genproto/googleapis/type/timeofday;timeofday";\n'
        'option objc_class_prefix = "GTP";\n'
        "\n"
        "message TimeOfDay {\n"
        "  int32 hours = 1;\n"
        "  int32 minutes = 2;\n"
        "  int32 seconds = 3;\n"
        "  int32 nanos = 4;\n"
        "}\n"
    ),
    "confluent/meta.proto": (
        'syntax = "proto3";\n'
        "package confluent;\n"
        "\n"
        'import "google/protobuf/descriptor.proto";\n'
        "\n"
        'option go_package = "../confluent";\n'
        "\n"
        "message Meta {\n"
        "  string doc = 1;\n"
        "  map<string, string> params = 2;\n"
        "  repeated string tags = 3;\n"
        "  repeated .confluent.Rule rules = 4;\n"
        "}\n"
        "\n"
        "message Rule {\n"
        "  string name = 1;\n"
        "  string doc = 2;\n"
        "  string expr = 3;\n"
        "  string sql = 4;\n"
        "}\n"
        "extend .google.protobuf.FileOptions {\n"
        "  .confluent.Meta file_meta = 1088;\n"
        "}\n"
        "extend .google.protobuf.MessageOptions {\n"
        "  .confluent.Meta message_meta = 1088;\n"
        "}\n"
        "extend .google.protobuf.FieldOptions {\n"
        "  .confluent.Meta field_meta = 1088;\n"
        "}\n"
        "extend .google.protobuf.EnumOptions {\n"
        "  .confluent.Meta enum_meta = 1088;\n"
        "}\n"
        "extend .google.protobuf.EnumValueOptions {\n"
        "  .confluent.Meta enum_value_meta = 1088;\n"
        "}\n"
    ),
    "confluent/type/decimal.proto": (
        'syntax = "proto3";\n'
        "package confluent.type;\n"
        "\n"
        "message Decimal {\n"
        "  bytes value = 1;\n"
        "  uint32 precision = 2;\n"
        "  int32 scale = 3;\n"
        "}\n"
    ),
    "confluent/type/variant.proto": (
        'syntax = "proto3";\n'
        "package confluent.type;\n"
        "\n"
        "message Variant {\n"
        "  bytes metadata = 1;\n"
        "  bytes value = 2;\n"
        "}\n"
    ),
}
