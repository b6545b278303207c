package esqlog.terms;

import java.io.IOException;
import java.util.List;

import org.opensearch.action.ActionType;
import org.opensearch.action.FailedNodeException;
import org.opensearch.action.support.ActionFilters;
import org.opensearch.action.support.nodes.BaseNodesRequest;
import org.opensearch.action.support.nodes.TransportNodesAction;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.threadpool.ThreadPool;
import org.opensearch.transport.TransportService;

/**
 * The nodes action behind {@code GET /_esqlog/terms/stats}: every node (or those the request
 * names) reports its own caches (NodeStats), so one request shows the whole cluster's, where
 * the endpoint before 1.10.0 showed the receiving node's alone and a cache too small on
 * another node went unseen. Its name sits under {@code cluster:monitor/}, so a role with the
 * {@code monitor} cluster privilege may call it.
 *
 * <p>The node-level request's base class moved in OpenSearch 3.0: StatsNodeRequest is the one
 * class compiled per release range (opensearch-2.11/, opensearch-3.0/).
 */
public final class StatsAction extends TransportNodesAction<StatsAction.Request, StatsResponse,
        StatsNodeRequest, NodeStats> {
    static final String NAME = "cluster:monitor/esqlog/terms/stats";
    static final ActionType<StatsResponse> TYPE = new ActionType<>(NAME, StatsResponse::new);

    @Inject
    public StatsAction(ThreadPool threadPool, ClusterService clusterService,
                       TransportService transportService, ActionFilters actionFilters) {
        super(NAME, threadPool, clusterService, transportService, actionFilters, Request::new,
            StatsNodeRequest::new, ThreadPool.Names.MANAGEMENT, NodeStats.class);
    }

    @Override
    protected StatsResponse newResponse(Request request, List<NodeStats> nodes,
                                        List<FailedNodeException> failures) {
        return new StatsResponse(clusterService.getClusterName(), nodes, failures);
    }

    @Override
    protected StatsNodeRequest newNodeRequest(Request request) {
        return new StatsNodeRequest();
    }

    @Override
    protected NodeStats newNodeResponse(StreamInput in) throws IOException {
        return new NodeStats(in);
    }

    @Override
    protected NodeStats nodeOperation(StatsNodeRequest request) {
        return new NodeStats(clusterService.localNode());
    }

    /** The nodes to ask (ids, names or the engine's node filters; none: all). */
    public static final class Request extends BaseNodesRequest<Request> {
        Request(String... nodes) {
            super(nodes);
        }

        Request(StreamInput in) throws IOException {
            super(in);
        }
    }
}
