/* catalog.h — the hardware catalog: typed link, switch, GPU, CPU and NIC
 * models loaded from the YAML files in models/ (schema in models/README.md).
 *
 * Every figure in the catalog comes from a file with a `source:`; C code
 * holds no hardware numbers.  Derived figures (a link's raw and effective
 * bandwidth) are computed here from the entry, and fs_link_model_explain()
 * prints the arithmetic.
 *
 * Ownership: FsCatalog owns every model and string; the const pointers it
 * hands out live as long as the catalog.  Lookups are by exact name;
 * iteration is in name order (deterministic; digit runs compare by value,
 * so pcie-gen4-x2 comes before pcie-gen4-x16).  Errors are in
 * FS_CATALOG_ERROR (or FS_YAML_ERROR from the YAML layer), with
 * file:line:col.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "util/schema.h"
#include "util/units.h"

G_BEGIN_DECLS

#define FS_CATALOG_ERROR (fs_catalog_error_quark())
GQuark fs_catalog_error_quark(void);

typedef enum {
  FS_CATALOG_ERROR_INVALID,   /* a value is out of range or inconsistent */
  FS_CATALOG_ERROR_UNKNOWN,   /* a reference to a model that does not exist */
  FS_CATALOG_ERROR_DUPLICATE, /* two models with one name */
} FsCatalogError;

/* Model kinds, as written in YAML (`kind: link`). */
#define FS_MODEL_KINDS(X) \
  X(LINK, "link")         \
  X(SWITCH, "switch")     \
  X(GPU, "gpu")           \
  X(CPU, "cpu")           \
  X(NIC, "nic")

typedef enum {
#define X(id, str) FS_MODEL_##id,
  FS_MODEL_KINDS(X)
#undef X
  FS_MODEL_N_KINDS
} FsModelKind;

/* Link families (`family: pcie`). */
#define FS_LINK_FAMILIES(X)         \
  X(PCIE, "pcie")                   \
  X(NVLINK, "nvlink")               \
  X(C2C, "nvlink-c2c")              \
  X(INTERSOCKET, "inter-socket")    \
  X(INFINIBAND, "infiniband")       \
  X(ETHERNET, "ethernet")

typedef enum {
#define X(id, str) FS_LINK_##id,
  FS_LINK_FAMILIES(X)
#undef X
  FS_LINK_N_FAMILIES
} FsLinkFamily;

/* Switch kinds (`switch_kind: nvswitch`). */
#define FS_SWITCH_KINDS(X)      \
  X(NVSWITCH, "nvswitch")       \
  X(PCIE, "pcie")               \
  X(INFINIBAND, "infiniband")   \
  X(ETHERNET, "ethernet")

typedef enum {
#define X(id, str) FS_SWITCH_##id,
  FS_SWITCH_KINDS(X)
#undef X
  FS_SWITCH_N_KINDS
} FsSwitchKind;

/* GPU architectures, oldest first (NCCL's tuning tables are per arch). */
#define FS_GPU_ARCHS(X)      \
  X(PASCAL, "pascal")        \
  X(VOLTA, "volta")          \
  X(AMPERE, "ampere")        \
  X(ADA, "ada")              \
  X(HOPPER, "hopper")        \
  X(BLACKWELL, "blackwell")

typedef enum {
#define X(id, str) FS_ARCH_##id,
  FS_GPU_ARCHS(X)
#undef X
  FS_ARCH_N
} FsGpuArch;

/* Datatypes with a peak rate (dense, no sparsity). */
#define FS_DTYPES(X)   \
  X(FP64, "fp64")      \
  X(FP32, "fp32")      \
  X(TF32, "tf32")      \
  X(FP16, "fp16")      \
  X(BF16, "bf16")      \
  X(FP8, "fp8")        \
  X(INT8, "int8")      \
  X(FP4, "fp4")

typedef enum {
#define X(id, str) FS_DTYPE_##id,
  FS_DTYPES(X)
#undef X
  FS_DTYPE_N
} FsDtype;

/* CPU vendors (`vendor: intel`).  NCCL tunes per vendor (llMaxBws rows,
 * network post overhead), so the catalog records it. */
#define FS_CPU_VENDORS(X)    \
  X(INTEL, "intel")          \
  X(AMD, "amd")              \
  X(IBM, "ibm")              \
  X(NVIDIA, "nvidia")

typedef enum {
#define X(id, str) FS_VENDOR_##id,
  FS_CPU_VENDORS(X)
#undef X
  FS_VENDOR_N
} FsCpuVendor;

const char *fs_model_kind_name(FsModelKind k);
const char *fs_link_family_name(FsLinkFamily f);
const char *fs_switch_kind_name(FsSwitchKind k);
const char *fs_gpu_arch_name(FsGpuArch a);
const char *fs_dtype_name(FsDtype d);
const char *fs_cpu_vendor_name(FsCpuVendor v);
/* Reverse lookups: return FALSE for an unknown name. */
gboolean fs_link_family_from_name(const char *s, FsLinkFamily *out);
gboolean fs_dtype_from_name(const char *s, FsDtype *out);
/* Added with the loader: the same for the other enums. */
gboolean fs_model_kind_from_name(const char *s, FsModelKind *out);
gboolean fs_switch_kind_from_name(const char *s, FsSwitchKind *out);
gboolean fs_gpu_arch_from_name(const char *s, FsGpuArch *out);
gboolean fs_cpu_vendor_from_name(const char *s, FsCpuVendor *out);

typedef struct FsModel FsModel;

typedef struct {
  FsLinkFamily family;
  const char *generation;   /* "Gen4", "NVLink4", "NDR" … */
  /* Signalling: lane_rate (bits/s per lane) × lanes × encoding / 8 = raw
   * bytes/s per direction.  When the entry gives `bandwidth:` instead,
   * lanes = 1, encoding = 1 and lane_rate = 8 × bandwidth. */
  double lane_rate;         /* bits/s per lane, per direction */
  guint lanes;
  double encoding;          /* payload bits per line bit: 8/10, 128/130, 64/66, 242/256 … */
  const char *encoding_name;
  /* Protocol efficiency: for PCIe, max_payload / (max_payload + tlp_overhead)
   * when both are given; else `efficiency:` (default 1). */
  uint32_t max_payload;     /* bytes, 0 if not given */
  uint32_t tlp_overhead;    /* bytes per TLP, 0 if not given */
  double efficiency;
  FsTime latency;           /* per hop, one way */
  /* Derived (bytes/s per direction). */
  double raw_bandwidth;
  double bandwidth;         /* raw × efficiency: what a flow can use */
  /* Added: the encoding as a product of ratios for printing, e.g.
   * "128/130" or "256/257 × 514/544"; "1" when there is none. */
  const char *encoding_ratio;
  /* Added: TRUE when the entry gave `bandwidth:` instead of lanes. */
  gboolean bandwidth_given;
} FsLinkModel;

typedef struct {
  FsSwitchKind kind;
  guint ports;
  const FsModel *port_link; /* link model of each port */
  FsTime latency;           /* switching latency, port to port */
  gboolean reduction;       /* in-network reduction (NVLS on NVSwitch gen3+, SHARP) */
  double reduction_bandwidth; /* bytes/s per port for reduction traffic; 0 = port rate */
  double power;             /* watts, 0 if unknown */
  double price;             /* US dollars, 0 if unknown */
  /* Added: PCIe switches only, the true lane count (ports counts x16
   * ports = lanes / 16); 0 for other switches. */
  guint lanes;
} FsSwitchModel;

typedef struct {
  FsGpuArch arch;
  double flops[FS_DTYPE_N]; /* dense peak FLOP/s; 0 where unsupported */
  uint64_t memory;          /* HBM/GDDR bytes */
  double memory_bandwidth;  /* bytes/s */
  const FsModel *nvlink;    /* link model of one NVLink, or NULL */
  guint nvlinks;            /* number of NVLinks */
  const FsModel *pcie;      /* host link model (PCIe) */
  const FsModel *c2c;       /* NVLink-C2C to a Grace CPU, or NULL */
  double tdp;               /* watts */
  double price;             /* US dollars, 0 if unknown */
  FsTime launch_latency;    /* kernel launch overhead */
  guint sms;                /* streaming multiprocessors */
  /* Added with calibration (not in the YAML; see fs_catalog_set_*):
   * the fraction of memory_bandwidth that streaming kernels reach (1 until
   * calibrated) and the fixed cost of one host<->device copy (0 until
   * calibrated). */
  double memory_efficiency;
  FsTime copy_latency;
  /* Added for identification (src/topo/identify.h): CUDA compute
   * capability × 10 (90 for "9.0"; 0 when not given), the package
   * (`form_factor`: "sxm", "pcie" or "superchip"; "" when not given), and
   * the CPU and NIC of NVIDIA's reference server for this GPU, which the
   * importers guess when no clue names the host (NULL when not given). */
  guint compute_capability;
  const char *form_factor;
  const FsModel *reference_cpu;
  const FsModel *reference_nic;
} FsGpuModel;

typedef struct {
  guint pcie_lanes;         /* per socket */
  const FsModel *pcie;      /* root-port link model */
  const FsModel *intersocket; /* UPI/xGMI/X-bus link model, or NULL */
  double memory_bandwidth;  /* bytes/s per socket */
  const FsModel *nvlink;    /* POWER8+/POWER9 NVLink to GPUs, or NULL */
  double tdp;
  double price;
  FsTime root_latency;      /* root-complex traversal latency */
  double root_bandwidth;    /* root-complex peer-to-peer bandwidth cap, bytes/s; 0 = none */
  /* Added with the loader. */
  FsCpuVendor vendor;
  guint intersocket_links;  /* links of model intersocket to the other socket; 0 if none */
  guint nvlinks;            /* NVLink bricks (POWER8+/POWER9); 0 if nvlink is NULL */
  /* Added for identification: cores per socket and hardware threads per
   * core (0 when the entry does not say). */
  guint cores;
  guint threads_per_core;
} FsCpuModel;

typedef struct {
  const FsModel *port_link; /* network link model per port (IB/Ethernet) */
  guint ports;
  const FsModel *pcie;      /* host link model */
  FsTime latency;           /* NIC processing latency */
  gboolean gpudirect;       /* GPUDirect RDMA capable */
  /* Physical devices the NIC stands for: 1, or N when a network plugin
   * presents N devices to NCCL as one NIC (aws-ofi-nccl's rails on AWS
   * p5).  The importers never pick a NIC of several devices: what they
   * see is one device (src/topo/identify.c). */
  guint devices;
  /* The network plugin's work per message in the GPU's proxy thread, which
   * runs every send and receive of the GPU's network connections one after
   * another: message_cost per message, stripe_cost per stripe of it (the
   * plugin splits a message over its devices in stripes of at least
   * min_stripe bytes, a divisor of devices many).  0: not modelled (the NIC
   * alone bounds a GPU's point-to-point traffic); p2p-sched.h
   * fs_p2p_proxy_rate_gbps. */
  FsTime message_cost;
  FsTime stripe_cost;
  uint64_t min_stripe;
  double power;
  double price;
} FsNicModel;

/* How a device names itself (GPUs, CPUs and NICs; the importers' clues,
 * src/topo/identify.h).  Each field is the YAML list joined by '\n' (""
 * when absent): `pci_ids` "10de:2330" (vendor:device, lowercase hex),
 * `product_names` as the device or its tools print them ("NVIDIA H100 80GB
 * HBM3"), `cpuid` "GenuineIntel 6 143" (vendor string, family and model as
 * /proc/cpuinfo prints them) or a machine name ("ppc64le", "aarch64") for
 * CPUs without x86 CPUID.  Test with fs_model_has_pci_id and friends. */
typedef struct {
  const char *pci_ids;
  const char *product_names;
  const char *cpuid;
} FsModelIds;

struct FsModel {
  FsModelKind kind;
  const char *name;         /* unique in the catalog, e.g. "pcie-gen4-x16" */
  const char *description;  /* one line, may be "" */
  const char *source;       /* where the figures come from (required) */
  const char *file;         /* the YAML file and position that defined it */
  int line, col;
  /* Figures replaced by a calibration, "field: provenance" joined by "; ",
   * or NULL when none was (see fs_catalog_set_link_efficiency). */
  const char *calibration;
  FsModelIds ids;           /* GPUs, CPUs, NICs; all "" for links and switches */
  union {
    FsLinkModel link;
    FsSwitchModel sw;
    FsGpuModel gpu;
    FsCpuModel cpu;
    FsNicModel nic;
  } u;
};

typedef struct FsCatalog FsCatalog;

FsCatalog *fs_catalog_new(void);
void fs_catalog_free(FsCatalog *cat);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FsCatalog, fs_catalog_free)

/* Loads one models file into cat (models may reference models defined in
 * files loaded earlier or later: references are resolved by
 * fs_catalog_resolve).  All or nothing: a file with any error (or a name
 * already in cat, reported with both positions) adds no model.  Derived
 * link figures are computed here, so that their errors name the entry. */
gboolean fs_catalog_load_file(FsCatalog *cat, const char *path, GError **error);

/* Checks every cross-reference (unknown name with "did you mean", wrong
 * kind, wrong link family) and stores the resolved pointers.  Must be
 * called after the last load and before the references (gpu.pcie,
 * switch.port_link ...) are used; calling it again after more loads
 * re-resolves everything.  Cost: one hash lookup per reference. */
gboolean fs_catalog_resolve(FsCatalog *cat, GError **error);

/* Loads models from text (name is used in messages as the file name).
 * Same contract as fs_catalog_load_file. */
gboolean fs_catalog_load_string(FsCatalog *cat, const char *text, gssize len,
                                const char *name, GError **error);

/* Loads every *.yaml directly in dir (sorted by name; subfolders are
 * ignored) and resolves.  A folder without any *.yaml is an error. */
FsCatalog *fs_catalog_load_dir(const char *dir, GError **error);

/* A deep copy of src: same models in the same order, every string and
 * every reference between models inside the copy, so that the copy can be
 * calibrated (fs_catalog_set_*) and freed independently of src.  Linear in
 * the catalog; much cheaper than parsing the YAML again. */
FsCatalog *fs_catalog_copy(const FsCatalog *src);

/* The models directory to use: fs_datadir(FS_DATA_MODELS) —
 * $FABRICSIM_MODELS if set, else <data root>/models (util/datadir.h).
 * Borrowed. */
const char *fs_catalog_default_dir(void);

/* Loads fs_catalog_default_dir() (or dir if non-NULL). */
FsCatalog *fs_catalog_load_default(const char *dir, GError **error);

/* Lookup by exact name; NULL if absent. */
const FsModel *fs_catalog_get(const FsCatalog *cat, const char *name);
/* Lookup by exact name; on failure sets error "unknown model \"x\"; did
 * you mean \"y\"?" (FS_CATALOG_ERROR_UNKNOWN, no position). */
const FsModel *fs_catalog_find(const FsCatalog *cat, const char *name, GError **error);
/* Lookup of a given kind; on failure sets error "unknown <kind> model
 * \"x\"; did you mean \"y\"?" or "\"x\" is a link model, not a gpu model"
 * (FS_CATALOG_ERROR_UNKNOWN; no position: callers prefix it). */
const FsModel *fs_catalog_require(const FsCatalog *cat, const char *name, FsModelKind kind,
                                  GError **error);

guint fs_catalog_size(const FsCatalog *cat);
/* i-th model in name order. */
const FsModel *fs_catalog_nth(const FsCatalog *cat, guint i);

/* The arithmetic of a link model's bandwidth, e.g.
 * "PCIe Gen4 x16: 16 GT/s × 16 lanes × 128/130 ÷ 8 = 31.5 GB/s raw per
 *  direction; × 0.914 TLP efficiency at 256 B payload (24 B per TLP) =
 *  28.8 GB/s" (one line, no newline).  Caller frees. */
char *fs_link_model_explain(const FsModel *link);

/* The arithmetic of any model's aggregate figures, one fact per line:
 * for links fs_link_model_explain(); for GPUs and CPUs the NVLink
 * aggregate ("18 × 25.0 GB/s = 450 GB/s per direction ...") and host
 * links; for switches ports × port rate; for NICs ports × port rate and
 * the host link.  Caller frees. */
char *fs_model_explain(const FsModel *m);

/* ---- Calibration overrides (src/catalog/override.c) --------------------
 *
 * A calibration (src/calib) replaces measured figures in a loaded catalog
 * through these setters, and only through them.  Each sets one field of the
 * named model, recomputes what is derived from it (a link's effective
 * bandwidth), and appends "field: note" to the model's `calibration`
 * string, which `fabricsim models` prints next to `source` (the peak
 * figures stay from the source; see validation/README.md); a NULL note
 * records nothing (for a fitter that tries values).  Errors:
 * FS_CATALOG_ERROR_UNKNOWN for a name that is not a model of the expected
 * kind, FS_CATALOG_ERROR_INVALID for a value out of range.  Pointers held
 * to the model stay valid (it is changed in place).  Cost: one lookup. */

/* Sets a link's protocol efficiency (0 < efficiency <= 1), replacing the
 * TLP-derived figure (max_payload and tlp_overhead are cleared), and
 * recomputes bandwidth = raw_bandwidth × efficiency. */
gboolean fs_catalog_set_link_efficiency(FsCatalog *cat, const char *link, double efficiency,
                                        const char *note, GError **error);
/* Sets a GPU's launch_latency (0 <= t <= 1 s). */
gboolean fs_catalog_set_gpu_launch_latency(FsCatalog *cat, const char *gpu, FsTime t,
                                           const char *note, GError **error);
/* Sets a GPU's memory_efficiency (0 < efficiency <= 1). */
gboolean fs_catalog_set_gpu_memory_efficiency(FsCatalog *cat, const char *gpu, double efficiency,
                                              const char *note, GError **error);
/* Sets a GPU's copy_latency (0 <= t <= 1 s). */
gboolean fs_catalog_set_gpu_copy_latency(FsCatalog *cat, const char *gpu, FsTime t,
                                         const char *note, GError **error);

/* ---- Identification (src/catalog/ids.c) ---------------------------------
 * Tests of a model's `pci_ids`, `product_names` and `cpuid` (FsModelIds).
 * All are pure and cost one pass over the model's list. */

/* TRUE when m lists PCI vendor:device (e.g. 0x10de, 0x2330). */
gboolean fs_model_has_pci_id(const FsModel *m, guint vendor, guint device);
/* TRUE when m lists name as a product name, compared after
 * fs_model_name_normalize on both sides. */
gboolean fs_model_has_product_name(const FsModel *m, const char *name);
/* TRUE when m lists this CPUID (vendor "GenuineIntel", family, model as
 * /proc/cpuinfo prints them), or, with vendor a machine name ("ppc64le")
 * and family = model = -1, that machine. */
gboolean fs_model_has_cpuid(const FsModel *m, const char *vendor, int family, int model);
/* A product name folded for comparison (caller frees): lowercase, a
 * leading "nvidia " and "tesla " dropped, '-' and '_' read as spaces, runs
 * of spaces made one, no leading or trailing space.  "Tesla V100-SXM2-16GB"
 * and "v100 sxm2 16gb" fold alike. */
char *fs_model_name_normalize(const char *name);

/* A short label of a link ("PCIe Gen4 x16", "NVLink4", "InfiniBand NDR").
 * Caller frees. */
char *fs_link_model_label(const FsModel *link);

/* The declared keys of a models file (util/schema.h), each with the name
 * models/README.md's markers give it ("catalog.link"); *n receives the
 * count.  Static, borrowed; the order is the README's. */
const FsSchemaEntry *fs_catalog_schemas(guint *n);

G_END_DECLS
