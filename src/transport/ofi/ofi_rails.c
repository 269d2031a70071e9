/* Which provider entries (fi_info) the ofi transport opens: one per rail.
 *
 * TERN_OFI_RAILS is either a count or a comma list of names:
 *   1 (default)   libfabric's first entry that leaves the host (its shm
 *                 provider and loopback domains are skipped), or the first
 *                 of TERN_OFI_PROVIDER / FI_PROVIDER: one endpoint per rank.
 *   N (2 or 3)    that entry, then the next entries of the same provider on
 *                 other domains, in libfabric's order.
 *   a,b[,c]       for each name, the first entry whose domain name (verbs:
 *                 mlx5_0; tcp: the interface, eth1) or fabric name (tcp:
 *                 the subnet, 10.1.0.0/24) is that name; named entries are
 *                 never skipped, and a name may repeat (two endpoints on one
 *                 interface).
 * Rails pair up by position: rail i of one rank talks to rail i of the
 * others, so every host must list its rails in the same order (fabric names,
 * which are the same on both ends of a link, make that easy). At most
 * OFI_RAILS_MAX rails: a remote key has room for one key per rail. */
#include "transport/ofi/ofi_internal.h"
#include "base/config.h"
#include "base/log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *domain_name(const struct fi_info *i)
{
    return i->domain_attr->name ? i->domain_attr->name : "";
}

static const char *fabric_name(const struct fi_info *i)
{
    return i->fabric_attr->name ? i->fabric_attr->name : "";
}

static int leaves_host(const struct fi_info *i)
{
    return !strstr(i->fabric_attr->prov_name, "shm") && strcmp(domain_name(i), "lo") != 0;
}

/* libfabric 1.17 offers TCP twice: tcp under the ofi_rxm utility provider,
 * and net, its developmental fork with reliable datagrams of its own
 * (merged back into tcp in later releases). net measured faster on every
 * count here (two network namespaces over a veth pair, 1 rank each):
 * latency 1-4 KB 5.3-6.0 us against 6.8-15.9, bandwidth 256 KB-4 MB
 * 3.0-4.3 GB/s against 1.5-2.5, MPI_Init over ofi 109 ms against 141 at
 * 2 ranks and 455 against 757 at 8. Unless a provider is named, an entry of
 * tcp;ofi_rxm is replaced by net's entry for the same domain and fabric.
 * Every rank decides alike (same libfabric), which matters: the two speak
 * different protocols. */
static struct fi_info *prefer_net(struct fi_info *all, struct fi_info *i, int forced)
{
    if (forced || strcmp(i->fabric_attr->prov_name, "tcp;ofi_rxm") != 0)
        return i;
    for (struct fi_info *j = all; j; j = j->next)
        if (strcmp(j->fabric_attr->prov_name, "net") == 0 &&
            strcmp(domain_name(j), domain_name(i)) == 0 &&
            strcmp(fabric_name(j), fabric_name(i)) == 0)
            return j;
    return i;
}

/* Every entry libfabric offers for reliable messages and RMA. */
static struct fi_info *list_entries(const char *prov, int forced)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints)
        return NULL;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    /* The core relies on in-order delivery per pair. */
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    if (forced)
        hints->fabric_attr->prov_name = strdup(prov);
    struct fi_info *all = NULL;
    int ret = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &all);
    fi_freeinfo(hints);
    if (ret || !all) {
        tern_error("ofi: no libfabric provider offers reliable messages and RMA%s%s: %s",
                   forced ? " for TERN_OFI_PROVIDER=" : "", forced ? prov : "",
                   ret ? fi_strerror(-ret) : "none found");
        return NULL;
    }
    return all;
}

/* The names a rail list could use, for the error message. */
static void list_names(const struct fi_info *all, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct fi_info *i = all; i && used + 1 < n; i = i->next) {
        char one[256];
        snprintf(one, sizeof one, "%s (%s, %s)", domain_name(i), fabric_name(i),
                 i->fabric_attr->prov_name);
        if (strstr(out, one))   /* libfabric lists an entry once per variant */
            continue;
        int w = snprintf(out + used, n - used, "%s%s", used ? ", " : "", one);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int is_count(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* By count: the first entry that leaves the host (or, forced, the first),
 * then one more per rail on a domain not used yet, same provider. */
static int pick_by_count(struct fi_info *all, int forced, int want, struct fi_info **pick)
{
    int n = 0;
    for (struct fi_info *i = all; i && !n; i = i->next)
        if (forced || leaves_host(i))
            pick[n++] = prefer_net(all, i, forced);
    if (!n) {
        pick[n++] = prefer_net(all, all, forced);
        return n;
    }
    for (struct fi_info *i = all; i && n < want; i = i->next) {
        if ((!forced && !leaves_host(i)) ||
            strcmp(i->fabric_attr->prov_name, pick[0]->fabric_attr->prov_name) != 0)
            continue;
        int used = 0;
        for (int k = 0; k < n; k++)
            used |= strcmp(domain_name(pick[k]), domain_name(i)) == 0;
        if (!used)
            pick[n++] = i;
    }
    return n;
}

/* By name: each comma-separated item names a domain or a fabric. */
static tern_status_t pick_by_name(struct fi_info *all, int forced, const char *list,
                                  struct fi_info **pick, int *n_p)
{
    int n = 0;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (n == OFI_RAILS_MAX) {
            tern_error("ofi: TERN_OFI_RAILS=%s: at most %d rails (a remote key holds one key "
                       "per rail in 3 words)", list, OFI_RAILS_MAX);
            return TERN_ERR_ARG;
        }
        struct fi_info *found = NULL;
        for (struct fi_info *i = all; i && !found; i = i->next) {
            const char *dn = domain_name(i), *fn = fabric_name(i);
            if ((strlen(dn) == len && strncmp(dn, p, len) == 0) ||
                (strlen(fn) == len && strncmp(fn, p, len) == 0))
                found = prefer_net(all, i, forced);
        }
        if (!found) {
            char names[1024];
            list_names(all, names, sizeof names);
            tern_error("ofi: TERN_OFI_RAILS: no provider domain or fabric named '%.*s' here; "
                       "libfabric offers: %s", (int)len, p, names);
            return TERN_ERR_ARG;
        }
        if (n && strcmp(found->fabric_attr->prov_name, pick[0]->fabric_attr->prov_name) != 0) {
            tern_error("ofi: TERN_OFI_RAILS=%s: rail %d is on provider %s, rail 0 on %s: every "
                       "rail must use the same provider", list, n,
                       found->fabric_attr->prov_name, pick[0]->fabric_attr->prov_name);
            return TERN_ERR_ARG;
        }
        pick[n++] = found;
        if (!end)
            break;
        p = end + 1;
    }
    if (!n) {
        tern_error("ofi: TERN_OFI_RAILS is empty: give a count or a comma list of names");
        return TERN_ERR_ARG;
    }
    *n_p = n;
    return TERN_OK;
}

tern_status_t tern_ofi_choose_rails(struct fi_info **rails, int *n_rails)
{
    const char *prov = tern_knob_str(TERN_KNOB_OFI_PROVIDER);
    int forced = strcmp(prov, "auto") != 0 && prov[0];
    const char *spec = tern_knob_str(TERN_KNOB_OFI_RAILS);
    long want = is_count(spec) ? strtol(spec, NULL, 10) : 0;
    if (is_count(spec) && (want < 1 || want > OFI_RAILS_MAX)) {
        tern_error("ofi: TERN_OFI_RAILS=%s: between 1 and %d rails (a remote key holds one key "
                   "per rail in 3 words)", spec, OFI_RAILS_MAX);
        return TERN_ERR_ARG;
    }
    tern_status_t lst = tern_ofi_lib_load();
    if (lst != TERN_OK)
        return lst;
    struct fi_info *all = list_entries(prov, forced);
    if (!all)
        return TERN_ERR_NOT_SUPPORTED;
    struct fi_info *pick[OFI_RAILS_MAX];
    int n = 0;
    tern_status_t st = TERN_OK;
    if (want) {
        n = pick_by_count(all, forced, (int)want, pick);
        if (n < want) {
            char names[1024];
            list_names(all, names, sizeof names);
            tern_error("ofi: TERN_OFI_RAILS=%ld: provider %s has %d domain%s here (%s); name "
                       "the rails to use one twice", want, pick[0]->fabric_attr->prov_name, n,
                       n == 1 ? "" : "s", names);
            st = TERN_ERR_ARG;
        }
    } else {
        st = pick_by_name(all, forced, spec, pick, &n);
    }
    int made = 0;
    while (st == TERN_OK && made < n) {
        if (!(rails[made] = fi_dupinfo(pick[made])))
            st = TERN_ERR_NOMEM;
        else
            made++;
    }
    if (st != TERN_OK)
        while (made > 0)
            fi_freeinfo(rails[--made]);
    fi_freeinfo(all);
    *n_rails = made;
    return st;
}
