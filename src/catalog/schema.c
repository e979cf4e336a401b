/* schema.c — the declared keys of a models file (util/schema.h): one table
 * per model kind over the keys common to all, read by parse.c and printed
 * into models/README.md by tools/gen-schema-docs.
 *
 * The ranges are not hardware figures: they only reject values no real
 * part can have (a typo of a unit, "1e30 TB/s"); models/README.md, "Sanity
 * limits", lists them.  Keys that are read here but stored by parse.c
 * (FS_SCHEMA_NOWHERE) are references to other models, lists and the link
 * figures whose meaning depends on other keys.
 */
#include <stddef.h>
#include <string.h>

#include "catalog/catalog-private.h"
#include "catalog/names.h"

#define OFF(member) offsetof(FsModel, member)
#define NOWHERE FS_SCHEMA_NOWHERE

/* Sanity bounds, as text in each field's unit (see the file comment). */
#define MAX_BANDWIDTH "100 TB/s"
#define MAX_LANE_RATE "1 Tb/s"
#define MAX_TIME "1 s"
#define MAX_POWER "100 kW"
#define MAX_PRICE "1e8"

#define BANDWIDTH(k, member, req, text)                                                   \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_BANDWIDTH, .offset = member,   \
   .required = req, .min = "0", .min_open = TRUE, .max = MAX_BANDWIDTH, .doc = text}
#define TIME(k, member, req, text)                                                         \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_TIME, .offset = member,         \
   .required = req, .min = "0", .max = MAX_TIME, .doc = text}
#define POWER(k, member, req, text)                                                        \
  {.key = k, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_POWER, .offset = member,        \
   .required = req, .min = "0", .max = MAX_POWER, .doc = text}
#define PRICE(member, text)                                                                \
  {.key = "price", .type = FS_SCHEMA_DOUBLE, .offset = member, .min = "0", .max = MAX_PRICE, \
   .doc = "US dollars" text}
#define COUNT(k, member, req, lo, hi, text)                                                \
  {.key = k, .type = FS_SCHEMA_UINT, .offset = member, .required = req, .min = lo,         \
   .max = hi, .doc = text}
#define REF(k, req, what, text)                                                            \
  {.key = k, .type = FS_SCHEMA_STRING, .offset = NOWHERE, .required = req,                 \
   .value_doc = what, .doc = text}
/* ---- identification lists: the form of their items ---- */

/* "10de:2330": four hex digits, a colon, four hex digits, lowercase. */
static gboolean valid_pci_id(const char *s)
{
  if (strlen(s) != 9 || s[4] != ':')
    return FALSE;
  for (int i = 0; i < 9; i++)
    if (i != 4 && !(g_ascii_isdigit(s[i]) || (s[i] >= 'a' && s[i] <= 'f')))
      return FALSE;
  return TRUE;
}

/* "GenuineIntel 6 143" (vendor, family, model in decimal) or a machine
 * name of lowercase letters, digits and '_' ("ppc64le", "aarch64"). */
static gboolean valid_cpuid(const char *s)
{
  g_auto(GStrv) w = g_strsplit(s, " ", -1);
  guint n = g_strv_length(w);
  if (n == 1) {
    for (const char *p = s; *p; p++)
      if (!(g_ascii_islower(*p) || g_ascii_isdigit(*p) || *p == '_'))
        return FALSE;
    return *s != '\0';
  }
  if (n != 3 || *w[0] == '\0')
    return FALSE;
  for (guint i = 1; i < 3; i++) {
    if (*w[i] == '\0' || strlen(w[i]) > 4)
      return FALSE;
    for (const char *p = w[i]; *p; p++)
      if (!g_ascii_isdigit(*p))
        return FALSE;
  }
  return TRUE;
}

/* A product name: any text on one line, not empty. */
static gboolean valid_product_name(const char *s)
{
  return *s != '\0' && strchr(s, '\n') == NULL;
}

#define ID_ITEM(k, fn, example)                                                            \
  static const FsSchemaField k##_item = {.key = #k, .type = FS_SCHEMA_STRING,               \
                                         .offset = NOWHERE, .valid = fn, .form = example}
ID_ITEM(pci_ids, valid_pci_id, "\"10de:2330\" (vendor:device, lowercase hex)");
ID_ITEM(product_names, valid_product_name, "\"NVIDIA H100 80GB HBM3\"");
ID_ITEM(cpuid, valid_cpuid,
        "\"GenuineIntel 6 143\" (vendor, family, model) or a machine name (\"ppc64le\")");

/* A list of identifiers k, each of the form its item declares (not empty
 * when present); parse.c joins them into the model (FsModelIds). */
#define IDS(k, form, text)                                                                 \
  {.key = #k, .type = FS_SCHEMA_LIST, .offset = NOWHERE, .item = &k##_item,                 \
   .nonempty = TRUE, .value_doc = form, .doc = text}
#define PCI_IDS                                                                            \
  IDS(pci_ids, "list of `\"vvvv:dddd\"` (lowercase hex)",                                \
      "PCI vendor:device ids of the part (physical and virtual functions)")
#define PRODUCT_NAMES                                                                      \
  IDS(product_names, "list of text",                                                     \
      "names as the device's tools print them (`\"NVIDIA H100 80GB HBM3\"`); compared "    \
      "ignoring case, a leading `NVIDIA `/`Tesla `, and `-`/`_`/spaces")

static const FsSchemaField common_fields[] = {
  {.key = "name", .type = FS_SCHEMA_STRING, .offset = OFF(name), .required = TRUE,
   .doc = "unique name: lowercase letters, digits and dashes (`pcie-gen4-x16`)"},
  {.key = "kind", .type = FS_SCHEMA_ENUM, .offset = OFF(kind), .required = TRUE,
   .names = fs_model_kind_names, .label = "model kind", .doc = "what the entry models"},
  {.key = "source", .type = FS_SCHEMA_STRING, .offset = OFF(source), .required = TRUE,
   .doc = "where the figures come from: spec, datasheet, white paper, paper; the word "
          "\"estimate\" marks a figure no document states"},
  {.key = "description", .type = FS_SCHEMA_STRING, .offset = OFF(description), .def = "",
   .doc = "one line for listings"},
};

const FsSchema fs_catalog_common_schema = {"model", NULL, common_fields,
                                           G_N_ELEMENTS(common_fields)};

static const FsSchemaField link_fields[] = {
  {.key = "family", .type = FS_SCHEMA_ENUM, .offset = OFF(u.link.family), .required = TRUE,
   .names = fs_link_family_names, .label = "link family", .doc = "the kind of link"},
  {.key = "generation", .type = FS_SCHEMA_STRING, .offset = OFF(u.link.generation), .def = "",
   .doc = "`Gen4`, `NVLink4`, `NDR`, `UPI 2.0` … (used in labels)"},
  {.key = "lane_rate", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_LANE_RATE,
   .offset = NOWHERE, .min = "0", .min_open = TRUE, .max = MAX_LANE_RATE,
   .required_doc = "this or `bandwidth`", .doc = "signalling rate of one lane (GT/s or Gb/s)"},
  {.key = "bandwidth", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_BANDWIDTH,
   .offset = NOWHERE, .min = "0", .min_open = TRUE, .max = MAX_BANDWIDTH,
   .required_doc = "this or `lane_rate`",
   .doc = "the per-direction rate given directly (then lanes = 1, encoding = 1)"},
  {.key = "lanes", .type = FS_SCHEMA_UINT, .offset = OFF(u.link.lanes), .min = "1", .max = "64",
   .required_doc = "with `lane_rate`, or `widths`", .doc = "lanes per direction"},
  {.key = "widths", .type = FS_SCHEMA_LIST, .offset = NOWHERE,
   .value_doc = "list of integers from 1 to 64",
   .doc = "expands the entry into `NAME-x<w>` for each width (see below)"},
  {.key = "encoding", .type = FS_SCHEMA_STRING, .offset = NOWHERE, .def = "1",
   .value_doc = "ratio",
   .doc = "payload bits per line bit: `8b/10b`, `128b/130b`, `64b/66b`, `242/256`, a product "
          "`256/257*514/544` (`×` also accepted), or a number like `0.97`"},
  {.key = "encoding_name", .type = FS_SCHEMA_STRING, .offset = NOWHERE,
   .doc = "how to print the encoding (default: as written)"},
  {.key = "max_payload", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = NOWHERE,
   .min = "1 B", .max = "1 MiB", .required_doc = "no, with `tlp_overhead`",
   .doc = "maximum payload of one TLP/packet"},
  {.key = "tlp_overhead", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = NOWHERE,
   .min = "0 B", .max = "64 KiB", .required_doc = "no, with `max_payload`",
   .doc = "bytes added per TLP/packet (headers, CRC, framing)"},
  {.key = "efficiency", .type = FS_SCHEMA_DOUBLE, .offset = NOWHERE, .min = "0",
   .min_open = TRUE, .max = "1", .def = "1",
   .doc = "protocol efficiency, when not derived from payload/overhead"},
  TIME("latency", OFF(u.link.latency), TRUE, "one-way latency of one hop over this link"),
};

static const FsSchemaField switch_fields[] = {
  {.key = "switch_kind", .type = FS_SCHEMA_ENUM, .offset = OFF(u.sw.kind), .required = TRUE,
   .names = fs_switch_kind_names, .label = "switch kind", .doc = "the fabric it switches"},
  COUNT("ports", OFF(u.sw.ports), TRUE, "1", "4096", "ports of `port_link`"),
  REF("port_link", TRUE, "link name",
      "link model of each port (family must match the switch kind)"),
  TIME("latency", OFF(u.sw.latency), TRUE, "port-to-port switching latency"),
  {.key = "reduction", .type = FS_SCHEMA_BOOL, .offset = OFF(u.sw.reduction), .def = "false",
   .doc = "in-network reduction (NVLink SHARP/NVLS, InfiniBand SHARP)"},
  {.key = "reduction_bandwidth", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_BANDWIDTH,
   .offset = OFF(u.sw.reduction_bandwidth), .min = "0", .min_open = TRUE, .max = MAX_BANDWIDTH,
   .doc = "per-port rate of reduction traffic (absent: the port rate); needs `reduction: true`"},
  POWER("power", OFF(u.sw.power), FALSE, "typical power"),
  PRICE(OFF(u.sw.price), ""),
  COUNT("lanes", OFF(u.sw.lanes), FALSE, "1", "4096",
        "true lane count of a PCIe switch (PCIe only)"),
};

/* flops: one key per datatype, each a rate up to 1 EFLOP/s. */
#define FLOPS_FIELD(id, str)                                                               \
  {.key = str, .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_FLOPS,                        \
   .offset = OFF(u.gpu.flops[FS_DTYPE_##id]), .min = "0", .max = "1 EFLOP/s"},
static const FsSchemaField flops_fields[] = {FS_DTYPES(FLOPS_FIELD)};
#undef FLOPS_FIELD
static const FsSchema flops_schema = {"flops", NULL, flops_fields, G_N_ELEMENTS(flops_fields)};

const char *const fs_catalog_form_factors[] = {"sxm", "pcie", "superchip", NULL};

static const FsSchemaField gpu_fields[] = {
  {.key = "arch", .type = FS_SCHEMA_ENUM, .offset = OFF(u.gpu.arch), .required = TRUE,
   .names = fs_gpu_arch_names, .label = "GPU architecture", .doc = "the GPU's architecture"},
  {.key = "flops", .type = FS_SCHEMA_MAP, .offset = NOWHERE, .required = TRUE,
   .sub = &flops_schema, .value_doc = "mapping of FLOP rates",
   .doc = "dense peak rate per datatype: keys `fp64`, `fp32`, `tf32`, `fp16`, `bf16`, `fp8`, "
          "`int8`, `fp4`; an absent type is unsupported (0).  Tensor-core rate where one exists, "
          "else vector rate; never the 2:4-sparsity figure.  `int8` counts integer ops"},
  {.key = "memory", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE, .offset = OFF(u.gpu.memory),
   .required = TRUE, .min = "1 B", .max = "1 PiB", .doc = "HBM/GDDR capacity"},
  BANDWIDTH("memory_bandwidth", OFF(u.gpu.memory_bandwidth), TRUE, "memory bandwidth"),
  REF("nvlink", FALSE, "link name", "model of one NVLink (family `nvlink`)"),
  {.key = "nvlinks", .type = FS_SCHEMA_UINT, .offset = OFF(u.gpu.nvlinks), .min = "0",
   .max = "64", .required_doc = "with `nvlink`", .doc = "number of NVLinks"},
  REF("pcie", TRUE, "link name", "host interface (family `pcie`)"),
  REF("c2c", FALSE, "link name", "NVLink-C2C to a Grace CPU (family `nvlink-c2c`)"),
  POWER("tdp", OFF(u.gpu.tdp), TRUE, "thermal design power"),
  PRICE(OFF(u.gpu.price), "; \"estimate\" in `source` marks a street price"),
  TIME("launch_latency", OFF(u.gpu.launch_latency), TRUE, "kernel launch overhead"),
  COUNT("sms", OFF(u.gpu.sms), TRUE, "1", "100000", "streaming multiprocessors"),
  PCI_IDS,
  PRODUCT_NAMES,
  {.key = "compute_capability", .type = FS_SCHEMA_STRING, .offset = NOWHERE,
   .value_doc = "`\"9.0\"`", .doc = "CUDA compute capability (NCCL's `sm` = 90)"},
  {.key = "form_factor", .type = FS_SCHEMA_ENUM, .offset = NOWHERE,
   .names = fs_catalog_form_factors, .label = "form factor",
   .doc = "the package: NVLink sets larger than a pair need `sxm`; `superchip` needs a Grace "
          "host"},
  REF("reference_cpu", FALSE, "cpu name",
      "the host CPU of NVIDIA's reference server for this GPU (DGX/HGX), preferred when no "
      "clue names it"),
  REF("reference_nic", FALSE, "nic name", "the NIC of that reference server"),
};

static const FsSchemaField cpu_fields[] = {
  {.key = "vendor", .type = FS_SCHEMA_ENUM, .offset = OFF(u.cpu.vendor), .required = TRUE,
   .names = fs_cpu_vendor_names, .label = "CPU vendor", .doc = "who makes it"},
  COUNT("pcie_lanes", OFF(u.cpu.pcie_lanes), TRUE, "0", "1024", "PCIe lanes of the socket"),
  REF("pcie", TRUE, "link name", "root-port link model (x16)"),
  REF("intersocket", FALSE, "link name",
      "link to the other socket (family `inter-socket` or `nvlink-c2c`)"),
  {.key = "intersocket_links", .type = FS_SCHEMA_UINT, .offset = OFF(u.cpu.intersocket_links),
   .min = "0", .max = "64", .required_doc = "no (1 when `intersocket` is given)",
   .doc = "how many such links"},
  BANDWIDTH("memory_bandwidth", OFF(u.cpu.memory_bandwidth), TRUE, "DRAM bandwidth of the socket"),
  REF("nvlink", FALSE, "link name", "NVLink bricks to GPUs (POWER8+, POWER9)"),
  {.key = "nvlinks", .type = FS_SCHEMA_UINT, .offset = OFF(u.cpu.nvlinks), .min = "0",
   .max = "64", .required_doc = "with `nvlink`", .doc = "number of NVLink bricks"},
  POWER("tdp", OFF(u.cpu.tdp), FALSE, "thermal design power"),
  PRICE(OFF(u.cpu.price), ""),
  TIME("root_latency", OFF(u.cpu.root_latency), TRUE, "one traversal of the root complex"),
  BANDWIDTH("root_bandwidth", OFF(u.cpu.root_bandwidth), FALSE,
            "cap on peer-to-peer traffic through the root complex (absent: no cap)"),
  COUNT("cores", OFF(u.cpu.cores), FALSE, "1", "4096",
        "cores per socket (matched against the `CPU Affinity` column's CPU count)"),
  COUNT("threads_per_core", OFF(u.cpu.threads_per_core), FALSE, "1", "16",
        "hardware threads per core"),
  IDS(cpuid, "list of `\"GenuineIntel 6 143\"` or a machine name `\"ppc64le\"`",
      "CPUID vendor, family and model as /proc/cpuinfo prints them"),
  PCI_IDS,
  PRODUCT_NAMES,
};

static const FsSchemaField nic_fields[] = {
  REF("port_link", TRUE, "link name",
      "network link of one port (family `infiniband` or `ethernet`)"),
  {.key = "ports", .type = FS_SCHEMA_UINT, .offset = OFF(u.nic.ports), .min = "1", .max = "64",
   .def = "1", .doc = "network ports"},
  REF("pcie", TRUE, "link name", "host link (family `pcie`)"),
  TIME("latency", OFF(u.nic.latency), TRUE, "adapter latency, one way"),
  {.key = "gpudirect", .type = FS_SCHEMA_BOOL, .offset = OFF(u.nic.gpudirect), .def = "false",
   .doc = "GPUDirect RDMA"},
  {.key = "devices", .type = FS_SCHEMA_UINT, .offset = OFF(u.nic.devices), .min = "1",
   .max = "64", .def = "1",
   .doc = "physical devices a network plugin presents to NCCL as this one NIC; the importers "
          "never pick a NIC of several (they see the devices)"},
  TIME("message_cost", OFF(u.nic.message_cost), FALSE,
       "the network plugin's time per message (a send or a receive) in the GPU's proxy thread; "
       "absent: 0, not modelled"),
  TIME("stripe_cost", OFF(u.nic.stripe_cost), FALSE,
       "the same per stripe of a message (the plugin's write on one device); absent: 0"),
  {.key = "min_stripe", .type = FS_SCHEMA_QUANTITY, .unit = FS_SCHEMA_SIZE,
   .offset = OFF(u.nic.min_stripe), .min = "0",
   .doc = "the plugin's least stripe: a message goes over ⌈size / this⌉ devices, at most "
          "`devices`, rounded down to a divisor of `devices`; absent: 0, one stripe"},
  POWER("power", OFF(u.nic.power), FALSE, "typical power"),
  PRICE(OFF(u.nic.price), ""),
  PCI_IDS,
  PRODUCT_NAMES,
};

#define SCHEMA(what, fields) {what, &fs_catalog_common_schema, fields, G_N_ELEMENTS(fields)}
const FsSchema fs_catalog_kind_schemas[FS_MODEL_N_KINDS] = {
  [FS_MODEL_LINK] = SCHEMA("link model", link_fields),
  [FS_MODEL_SWITCH] = SCHEMA("switch model", switch_fields),
  [FS_MODEL_GPU] = SCHEMA("gpu model", gpu_fields),
  [FS_MODEL_CPU] = SCHEMA("cpu model", cpu_fields),
  [FS_MODEL_NIC] = SCHEMA("nic model", nic_fields),
};
#undef SCHEMA

static const FsSchemaField top_fields[] = {
  {.key = "models", .type = FS_SCHEMA_LIST, .offset = NOWHERE, .required = TRUE,
   .value_doc = "list of entries", .doc = "the models this file defines (may be empty)"},
};
const FsSchema fs_catalog_file_schema = {"models file", NULL, top_fields, G_N_ELEMENTS(top_fields)};

static const FsSchemaEntry schemas[] = {
  {"catalog.file", &fs_catalog_file_schema},
  {"catalog.common", &fs_catalog_common_schema},
  {"catalog.link", &fs_catalog_kind_schemas[FS_MODEL_LINK]},
  {"catalog.switch", &fs_catalog_kind_schemas[FS_MODEL_SWITCH]},
  {"catalog.gpu", &fs_catalog_kind_schemas[FS_MODEL_GPU]},
  {"catalog.gpu.flops", &flops_schema},
  {"catalog.cpu", &fs_catalog_kind_schemas[FS_MODEL_CPU]},
  {"catalog.nic", &fs_catalog_kind_schemas[FS_MODEL_NIC]},
};

const FsSchemaEntry *fs_catalog_schemas(guint *n)
{
  *n = G_N_ELEMENTS(schemas);
  return schemas;
}
